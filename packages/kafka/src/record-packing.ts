import type { Message, TopicMessages } from 'kafkajs';

/**
 * A `sendBatch` argument as one transferable buffer plus a small index, so handing a batch to the
 * producer thread costs one memcpy instead of a structured clone of hundreds of small Buffers.
 * Records of a key, a value and headers with string values (such as the trace context) pack;
 * anything else (Buffer or repeated header values, partition, timestamp) travels cloned.
 */
export interface PackedBatch {
  /** Per topic: its name and how many records follow in `data`, in order. */
  topics: { topic: string; count: number }[];
  /**
   * Per record: u32 key length (0xffffffff = no key), key, u32 value length, value, u32 header
   * count, then per header u32 name length, name, u32 value length, value (UTF-8).
   */
  data: ArrayBuffer;
}

const NO_KEY = 0xffffffff;

const stringHeaders = (headers: Message['headers']) => {
  for (const name in headers) if (typeof headers[name] !== 'string') return false;
  return true;
};

const isPlain = (m: Message) => {
  for (const k in m) if (k !== 'key' && k !== 'value' && (k !== 'headers' || !stringHeaders(m.headers))) return false;
  return m.value !== null && m.value !== undefined;
};

/** Packs `topicMessages`, or returns undefined when some record has more than a key and a value. */
export function packBatch(topicMessages: TopicMessages[]): PackedBatch | undefined {
  let size = 0;
  for (const { messages } of topicMessages) {
    for (const m of messages) {
      if (!isPlain(m)) return undefined;
      size +=
        12 +
        (m.key === null || m.key === undefined ? 0 : Buffer.byteLength(m.key as string | Buffer)) +
        Buffer.byteLength(m.value as string | Buffer);
      for (const name in m.headers) size += 8 + Buffer.byteLength(name) + Buffer.byteLength(m.headers[name] as string);
    }
  }
  const data = new ArrayBuffer(size);
  const buf = Buffer.from(data);
  let at = 0;
  const put = (v: string | Buffer) => {
    const n = typeof v === 'string' ? buf.write(v, at + 4) : v.copy(buf, at + 4);
    buf.writeUInt32LE(n, at);
    at += 4 + n;
  };
  for (const { messages } of topicMessages) {
    for (const m of messages) {
      if (m.key === null || m.key === undefined) {
        buf.writeUInt32LE(NO_KEY, at);
        at += 4;
      } else put(m.key as string | Buffer);
      put(m.value as string | Buffer);
      const names = m.headers === undefined ? [] : Object.keys(m.headers);
      buf.writeUInt32LE(names.length, at);
      at += 4;
      for (const name of names) {
        put(name);
        put(m.headers![name] as string);
      }
    }
  }
  return { topics: topicMessages.map((t) => ({ topic: t.topic, count: t.messages.length })), data };
}

/** The inverse of `packBatch`: keys and values are views into `data` (kafkajs copies them out). */
export function unpackBatch(packed: PackedBatch): TopicMessages[] {
  const buf = Buffer.from(packed.data);
  let at = 0;
  const take = () => {
    const n = buf.readUInt32LE(at);
    at += 4;
    if (n === NO_KEY) return null;
    const view = buf.subarray(at, at + n);
    at += n;
    return view;
  };
  return packed.topics.map(({ topic, count }) => {
    const messages: Message[] = new Array(count);
    for (let i = 0; i < count; i++) {
      const key = take();
      const value = take();
      const headerCount = buf.readUInt32LE(at);
      at += 4;
      if (headerCount === 0) {
        messages[i] = { key, value };
        continue;
      }
      const headers: Record<string, string> = {};
      for (let h = 0; h < headerCount; h++) {
        const name = take()!.toString();
        headers[name] = take()!.toString();
      }
      messages[i] = { key, value, headers };
    }
    return { topic, messages };
  });
}

const asBuffer = <T>(v: T): T | Buffer =>
  v instanceof Uint8Array && !Buffer.isBuffer(v) ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : v;

/**
 * Structured clone turns Buffers into plain Uint8Arrays, which kafkajs would write as
 * `String(value)`: makes keys, values and header values Buffers again.
 */
export function reviveCloned(topicMessages: TopicMessages[]): TopicMessages[] {
  for (const { messages } of topicMessages) {
    for (const m of messages) {
      m.key = asBuffer(m.key) as Message['key'];
      m.value = asBuffer(m.value) as Message['value'];
      if (m.headers) {
        for (const h of Object.keys(m.headers)) {
          const v = m.headers[h];
          m.headers[h] = (Array.isArray(v) ? v.map(asBuffer) : asBuffer(v)) as string | Buffer;
        }
      }
    }
  }
  return topicMessages;
}
