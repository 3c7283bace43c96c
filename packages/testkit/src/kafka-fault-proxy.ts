import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** Kafka's request keys the proxy rewrites answers of. */
const LIST_OFFSETS = 2;
const METADATA = 3;
/** Kafka's NOT_LEADER_OR_FOLLOWER (kafkajs: NOT_LEADER_FOR_PARTITION). */
export const NOT_LEADER_OR_FOLLOWER = 6;

export interface KafkaFaultProxy {
  /** `host:port` to give clients instead of the broker's address. */
  brokers: string;
  /**
   * While true, every partition in ListOffsets answers carries NOT_LEADER_OR_FOLLOWER: what a busy
   * broker answers while a just-created topic's leadership is still being placed.
   */
  listOffsetsNotLeader: boolean;
  /** Likewise for every partition in Metadata answers. */
  metadataNotLeader: boolean;
  /** ListOffsets and Metadata answers rewritten so far. */
  readonly rewritten: { listOffsets: number; metadata: number };
  close(): Promise<void>;
}

/** Reads Kafka's length-prefixed frames off a byte stream. */
class Frames {
  #buffer = Buffer.alloc(0);
  push(chunk: Buffer): Buffer[] {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    const frames: Buffer[] = [];
    while (this.#buffer.length >= 4) {
      const size = this.#buffer.readInt32BE(0);
      if (this.#buffer.length < 4 + size) break;
      frames.push(this.#buffer.subarray(0, 4 + size));
      this.#buffer = this.#buffer.subarray(4 + size);
    }
    return frames;
  }
}

/** A cursor over a response body (non-flexible versions, the ones kafkajs speaks). */
class Cursor {
  offset: number;
  readonly buf: Buffer;
  constructor(buf: Buffer, offset: number) {
    this.buf = buf;
    this.offset = offset;
  }
  skip(n: number): void {
    this.offset += n;
  }
  int32(): number {
    const v = this.buf.readInt32BE(this.offset);
    this.offset += 4;
    return v;
  }
  string(): string | null {
    const len = this.buf.readInt16BE(this.offset);
    this.offset += 2;
    if (len < 0) return null;
    const s = this.buf.toString('utf8', this.offset, this.offset + len);
    this.offset += len;
    return s;
  }
  skipInt32Array(): void {
    const n = this.int32();
    this.offset += Math.max(0, n) * 4;
  }
}

/** Sets every partition's error code of a ListOffsets response (v1–v3) to `code`; returns how many. */
function failListOffsets(frame: Buffer, version: number, code: number): number {
  const c = new Cursor(frame, 8); // size, correlation id
  if (version >= 2) c.skip(4); // throttle_time_ms
  let count = 0;
  for (let t = c.int32(); t > 0; t--) {
    c.string();
    for (let p = c.int32(); p > 0; p--) {
      c.skip(4); // partition
      frame.writeInt16BE(code, c.offset);
      c.skip(2 + 8 + 8); // error_code, timestamp, offset
      count++;
    }
  }
  return count;
}

/**
 * Rewrites a Metadata response (v0–v6): the brokers' addresses become the proxy's, and while
 * `code` is set every partition's error code becomes it. Returns the new frame.
 */
function rewriteMetadata(frame: Buffer, version: number, proxy: { host: string; port: number }, code?: number): Buffer {
  const c = new Cursor(frame, 8);
  if (version >= 3) c.skip(4); // throttle_time_ms
  const brokersAt = c.offset;
  const brokers: { nodeId: number; rack: string | null }[] = [];
  for (let n = c.int32(); n > 0; n--) {
    const nodeId = c.int32();
    c.string();
    c.int32();
    brokers.push({ nodeId, rack: version >= 1 ? c.string() : null });
  }
  if (brokers.length !== 1) throw new Error(`the fault proxy serves one broker; metadata named ${brokers.length}`);
  const restAt = c.offset;
  if (code !== undefined) {
    if (version >= 2) c.string(); // cluster_id
    if (version >= 1) c.skip(4); // controller_id
    for (let t = c.int32(); t > 0; t--) {
      c.skip(2); // topic error code
      c.string();
      if (version >= 1) c.skip(1); // is_internal
      for (let p = c.int32(); p > 0; p--) {
        frame.writeInt16BE(code, c.offset);
        c.skip(2 + 4 + 4); // error code, partition, leader
        c.skipInt32Array(); // replicas
        c.skipInt32Array(); // isr
        if (version >= 5) c.skipInt32Array(); // offline replicas
      }
    }
  }
  const host = Buffer.from(proxy.host, 'utf8');
  const broker = Buffer.alloc(4 + 4 + 2 + host.length + 4 + (version >= 1 ? 2 : 0));
  broker.writeInt32BE(1, 0);
  broker.writeInt32BE(brokers[0]!.nodeId, 4);
  broker.writeInt16BE(host.length, 8);
  host.copy(broker, 10);
  broker.writeInt32BE(proxy.port, 10 + host.length);
  if (version >= 1) broker.writeInt16BE(-1, 14 + host.length); // rack: none
  const out = Buffer.concat([frame.subarray(0, brokersAt), broker, frame.subarray(restAt)]);
  out.writeInt32BE(out.length - 4, 0);
  return out;
}

/**
 * A TCP proxy in front of one real Kafka broker that forwards every request and can make the
 * broker's ListOffsets and Metadata answers say NOT_LEADER_OR_FOLLOWER for every partition
 * (`listOffsetsNotLeader`, `metadataNotLeader`), as a busy broker does right after topics are created. Metadata answers always
 * name the proxy as the broker, so clients keep going through it.
 */
export async function startKafkaFaultProxy(broker: string): Promise<KafkaFaultProxy> {
  const [brokerHost, brokerPort] = broker.split(':') as [string, string];
  const sockets = new Set<Socket>();
  const rewritten = { listOffsets: 0, metadata: 0 };
  let address = { host: '127.0.0.1', port: 0 };
  const state = { listOffsets: false, metadata: false };
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: brokerHost, port: Number(brokerPort) });
    sockets.add(client).add(upstream);
    const asked = new Map<number, { key: number; version: number }>();
    const requests = new Frames();
    const responses = new Frames();
    client.on('data', (chunk) => {
      for (const frame of requests.push(chunk)) {
        asked.set(frame.readInt32BE(8), { key: frame.readInt16BE(4), version: frame.readInt16BE(6) });
        upstream.write(frame);
      }
    });
    upstream.on('data', (chunk) => {
      for (let frame of responses.push(chunk)) {
        const correlationId = frame.readInt32BE(4);
        const request = asked.get(correlationId);
        asked.delete(correlationId);
        if (request?.key === METADATA) {
          frame = rewriteMetadata(frame, request.version, address, state.metadata ? NOT_LEADER_OR_FOLLOWER : undefined);
          if (state.metadata) rewritten.metadata++;
        } else if (request?.key === LIST_OFFSETS && state.listOffsets && request.version >= 1) {
          if (failListOffsets(frame, request.version, NOT_LEADER_OR_FOLLOWER) > 0) rewritten.listOffsets++;
        }
        client.write(frame);
      }
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const s of [client, upstream]) {
      s.on('error', end);
      s.on('close', end);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  address = { host: '127.0.0.1', port: (server.address() as AddressInfo).port };
  return {
    brokers: `${address.host}:${address.port}`,
    get listOffsetsNotLeader() {
      return state.listOffsets;
    },
    set listOffsetsNotLeader(on: boolean) {
      state.listOffsets = on;
    },
    get metadataNotLeader() {
      return state.metadata;
    },
    set metadataNotLeader(on: boolean) {
      state.metadata = on;
    },
    rewritten,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
