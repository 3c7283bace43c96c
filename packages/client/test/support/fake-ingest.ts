import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, beforeEach } from 'node:test';

/** One request as the fake ingest saw it. */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  bytes: number;
  body: {
    batch: Array<Record<string, unknown> & { messageId: string; type: string }>;
    sentAt: string;
    context: Record<string, unknown>;
  };
  receivedAt: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Destroy the socket instead of answering (a network error for the client). */
  destroy?: boolean;
  /** Answer only after this many milliseconds. */
  delayMs?: number;
}

/** Decides the answer to the `n`th request (from 1). Default: 200. */
export type Responder = (n: number, req: ReceivedRequest) => Reply;

/** A real HTTP server on 127.0.0.1 that records every `POST /v1/batch`. */
export class FakeIngest {
  readonly requests: ReceivedRequest[] = [];
  responder: Responder = () => ({ status: 200, body: '{"success":true}' });
  readonly #server: Server;
  #waiters: Array<() => void> = [];

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(responder?: Responder): Promise<FakeIngest> {
    const server = createServer();
    const ingest = new FakeIngest(server);
    if (responder) ingest.responder = responder;
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const received: ReceivedRequest = {
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          bytes: raw.length,
          body: JSON.parse(raw.toString('utf8')),
          receivedAt: Date.now(),
        };
        ingest.requests.push(received);
        const reply = ingest.responder(ingest.requests.length, received);
        ingest.#notify();
        if (reply.destroy) {
          req.socket.destroy();
          return;
        }
        const answer = () => {
          if (res.destroyed) return;
          res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
          res.end(reply.body ?? '');
        };
        if (reply.delayMs) setTimeout(answer, reply.delayMs);
        else answer();
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return ingest;
  }

  get endpoint(): string {
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** Every message received, in arrival order, across all requests (including refused ones). */
  get messages(): ReceivedRequest['body']['batch'] {
    return this.requests.flatMap((r) => r.body.batch);
  }

  /** Resolves once `predicate` holds; rejects after `timeoutMs`. */
  async waitFor(predicate: (ingest: FakeIngest) => boolean, timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms (${this.requests.length} requests so far)`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    this.#server.close();
    await once(this.#server, 'close');
  }

  #notify(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

/** Lets pending I/O and timers run for `ms` real milliseconds. */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A FakeIngest for each test of the calling file (or one for the whole file), closed after it. The
 * returned object stands for the current one: `ingest.endpoint`, `ingest.responder = …`.
 */
export function fakeIngestPerTest(scope: 'test' | 'file' = 'test'): FakeIngest {
  let current: FakeIngest | undefined;
  (scope === 'test' ? beforeEach : before)(async () => {
    current = await FakeIngest.start();
  });
  (scope === 'test' ? afterEach : after)(async () => {
    await current?.close();
  });
  return new Proxy({} as FakeIngest, {
    get: (_target, key) => {
      const value = Reflect.get(current!, key);
      return typeof value === 'function' ? value.bind(current) : value;
    },
    set: (_target, key, value) => Reflect.set(current!, key, value),
  });
}
