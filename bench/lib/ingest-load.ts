import { connect, type Socket } from 'node:net';

export interface LoadResult {
  requests: number;
  failures: number;
  events: number;
  seconds: number;
  latenciesMs: number[];
}

const HEADER_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i;

/**
 * Posts `body` to `origin` + `path` from `connections` keep-alive HTTP/1.1 connections for
 * `seconds`, one request at a time on each, counting 200s. Each request has the bytes undici
 * 7 writes for the same call (request line, `host`, `connection: keep-alive`, the given headers,
 * `content-length`, the body), written straight to a socket: the load generator shares the
 * machine with the server it measures, and an undici `Pool` spent 1.1–3.3 µs of CPU per event of
 * a 100-call body where this spends 0.6–0.8 (bench/RESULTS.md).
 */
export async function runHttpLoad(options: {
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: () => Buffer;
  callsPerRequest: number;
  connections: number;
  seconds: number;
}): Promise<LoadResult> {
  const url = new URL(options.origin);
  const head = [`POST ${options.path} HTTP/1.1`, `host: ${url.host}`, 'connection: keep-alive'];
  for (const [name, value] of Object.entries(options.headers)) head.push(`${name}: ${value}`);
  const headFor = new Map<number, Buffer>();
  const requestHead = (length: number) => {
    let bytes = headFor.get(length);
    if (!bytes) headFor.set(length, (bytes = Buffer.from(`${head.join('\r\n')}\r\ncontent-length: ${length}\r\n\r\n`)));
    return bytes;
  };
  const latenciesMs: number[] = [];
  let requests = 0;
  let failures = 0;
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  const worker = async () => {
    let conn: Connection | undefined;
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        conn ??= await Connection.open(url);
        const body = options.body();
        const status = await conn.request(requestHead(body.length), body);
        if (status === 200) {
          requests += 1;
          latenciesMs.push(performance.now() - t0);
        } else failures += 1;
      } catch {
        failures += 1;
        conn?.close();
        conn = undefined;
      }
    }
    conn?.close();
  };
  await Promise.all(Array.from({ length: options.connections }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { requests, failures, events: requests * options.callsPerRequest, seconds, latenciesMs };
}

/** One keep-alive connection: a request, then its whole answer (status line, headers, `content-length` body). */
class Connection {
  readonly #socket: Socket;
  #pending: { resolve: (status: number) => void; reject: (err: Error) => void } | undefined;
  #received: Buffer[] = [];
  #receivedBytes = 0;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    const fail = (err: Error) => {
      const pending = this.#pending;
      this.#pending = undefined;
      pending?.reject(err);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('connection closed')));
  }

  static open(url: URL): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.off('error', reject);
        resolve(new Connection(socket));
      });
      socket.once('error', reject);
    });
  }

  request(head: Buffer, body: Buffer): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#pending = { resolve, reject };
      this.#socket.cork();
      this.#socket.write(head);
      this.#socket.write(body);
      this.#socket.uncork();
    });
  }

  close(): void {
    this.#socket.destroy();
  }

  #onData(chunk: Buffer): void {
    this.#received.push(chunk);
    this.#receivedBytes += chunk.length;
    const data = this.#received.length === 1 ? chunk : Buffer.concat(this.#received, this.#receivedBytes);
    const end = data.indexOf(HEADER_END);
    if (end < 0) {
      this.#keep(data);
      return;
    }
    const headers = data.toString('latin1', 0, end);
    const length = Number(CONTENT_LENGTH.exec(headers)?.[1] ?? 0);
    const total = end + HEADER_END.length + length;
    if (data.length < total) {
      this.#keep(data);
      return;
    }
    // One request at a time per connection: nothing follows the answer.
    this.#received = [];
    this.#receivedBytes = 0;
    const pending = this.#pending;
    this.#pending = undefined;
    pending?.resolve(Number(headers.slice(9, 12)));
  }

  #keep(data: Buffer): void {
    this.#received = [data];
    this.#receivedBytes = data.length;
  }
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
