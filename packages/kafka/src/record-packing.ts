import type { Message, TopicMessages } from 'kafkajs';

/**
 * A `sendBatch` argument as one transferable buffer plus a small index, so handing a batch to the
 * producer thread costs one memcpy instead of a structured clone of hundreds of small Buffers.
 * Records of a key, a value (or none: a tombstone), a partition and headers with string values
 * (such as the trace context) pack; anything else (Buffer or repeated header values, timestamp)
 * travels cloned, and a cloned Buffer carries its whole `ArrayBuffer` (Node's pool, a fetched
 * batch), so the records Sluice writes are all of the packing kind.
 */
export interface PackedBatch {
  /** Per topic: its name and how many records follow in `data`, in order. */
  topics: { topic: string; count: number }[];
  /**
   * Per record: u32 key length (0xffffffff = no key), key, u32 value length (0xffffffff = no
   * value: a tombstone), value, u32 partition (0xffffffff = the partitioner's choice), u32 header
   * count, then per header u32 name length, name, u32 value length, value (UTF-8).
   */
  data: ArrayBuffer;
}

/** No key, no value (a tombstone) or no partition given, where a length or a partition stands. */
const NONE = 0xffffffff;

const stringHeaders = (headers: Message['headers']) => {
  for (const name in headers) if (typeof headers[name] !== 'string') return false;
  return true;
};

const PACKED_FIELDS = new Set(['key', 'value', 'partition']);

const isPlain = (m: Message) => {
  for (const k in m) if (!PACKED_FIELDS.has(k) && (k !== 'headers' || !stringHeaders(m.headers))) return false;
  return (
    m.value !== undefined &&
    (m.partition === undefined || (Number.isInteger(m.partition) && m.partition >= 0 && m.partition < NONE))
  );
};

/**
 * Packs `topicMessages`, or returns undefined when some record has more than a key, a value and string headers.
 * One pass: the buffer starts at the batch's length in UTF-16 units (its UTF-8 size when the text
 * is ASCII, as records nearly always are) and grows when a string needs more; the UTF-8 length of
 * a string is counted only where its write may have been cut short. `data` may end in unused bytes
 * (the index says how many records it holds).
 */
export function packBatch(topicMessages: TopicMessages[]): PackedBatch | undefined {
  let estimate = 0;
  for (const { messages } of topicMessages) {
    for (const m of messages) {
      if (!isPlain(m)) return undefined;
      estimate += 16 + (m.key === null || m.key === undefined ? 0 : m.key.length) + (m.value?.length ?? 0);
      for (const name in m.headers) estimate += 8 + name.length + (m.headers[name] as string).length;
    }
  }
  let buf = Buffer.from(new ArrayBuffer(estimate));
  let at = 0;
  const grow = (needed: number) => {
    const bigger = Buffer.from(new ArrayBuffer(Math.max(needed, buf.length * 2)));
    buf.copy(bigger, 0, 0, at);
    buf = bigger;
  };
  const put = (v: string | Buffer) => {
    let n: number;
    if (typeof v === 'string') {
      // A string's UTF-8 takes at least one byte per UTF-16 unit, and a write stops short only with
      // fewer than 4 bytes left: with more left after it, the whole string went in.
      if (at + 4 + v.length > buf.length) grow(at + 4 + Buffer.byteLength(v) + 4);
      n = buf.write(v, at + 4);
      if (buf.length - (at + 4 + n) < 4) {
        const bytes = Buffer.byteLength(v);
        if (bytes !== n) {
          grow(at + 4 + bytes + 4);
          n = buf.write(v, at + 4);
        }
      }
    } else {
      if (at + 4 + v.length > buf.length) grow(at + 4 + v.length + 4);
      n = v.copy(buf, at + 4);
    }
    buf.writeUInt32LE(n, at);
    at += 4 + n;
  };
  const putNumber = (n: number) => {
    if (at + 4 > buf.length) grow(at + 4);
    buf.writeUInt32LE(n, at);
    at += 4;
  };
  for (const { messages } of topicMessages) {
    for (const m of messages) {
      if (m.key === null || m.key === undefined) putNumber(NONE);
      else put(m.key as string | Buffer);
      if (m.value === null) putNumber(NONE);
      else put(m.value as string | Buffer);
      putNumber(m.partition ?? NONE);
      const names = m.headers === undefined ? [] : Object.keys(m.headers);
      putNumber(names.length);
      for (const name of names) {
        put(name);
        put(m.headers![name] as string);
      }
    }
  }
  return {
    topics: topicMessages.map((t) => ({ topic: t.topic, count: t.messages.length })),
    data: buf.buffer as ArrayBuffer,
  };
}

/** The inverse of `packBatch`: keys and values are views into `data` (kafkajs copies them out). */
export function unpackBatch(packed: PackedBatch): TopicMessages[] {
  const buf = Buffer.from(packed.data);
  let at = 0;
  const take = () => {
    const n = buf.readUInt32LE(at);
    at += 4;
    if (n === NONE) return null;
    const view = buf.subarray(at, at + n);
    at += n;
    return view;
  };
  return packed.topics.map(({ topic, count }) => {
    const messages: Message[] = new Array(count);
    for (let i = 0; i < count; i++) {
      const key = take();
      const value = take();
      const partition = buf.readUInt32LE(at);
      const headerCount = buf.readUInt32LE(at + 4);
      at += 8;
      const message: Message = partition === NONE ? { key, value } : { key, value, partition };
      if (headerCount > 0) {
        const headers: Record<string, string> = {};
        for (let h = 0; h < headerCount; h++) {
          const name = take()!.toString();
          headers[name] = take()!.toString();
        }
        message.headers = headers;
      }
      messages[i] = message;
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
