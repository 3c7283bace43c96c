import type { IHeaders, KafkaMessage } from 'kafkajs';

/** A record as handlers see it: the parts of a kafkajs message Sluice uses. */
export interface ConsumedRecord {
  topic: string;
  partition: number;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: IHeaders;
  /** Broker timestamp, epoch ms. */
  timestamp: number;
}

export function toConsumedRecord(topic: string, partition: number, message: KafkaMessage): ConsumedRecord {
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key,
    value: message.value,
    headers: message.headers ?? {},
    timestamp: Number(message.timestamp),
  };
}

/**
 * The record with its key, value and header bytes in memory of their own. A fetched record's
 * buffers are views of its whole fetch response; a record kept long (waiting in memory for its
 * turn) would keep that response alive with it.
 */
export function ownedRecord(record: ConsumedRecord): ConsumedRecord {
  const own = (b: Buffer | null) => (b === null ? null : Buffer.from(b));
  const headers: IHeaders = {};
  for (const [name, value] of Object.entries(record.headers)) {
    if (value === undefined) continue;
    headers[name] = Array.isArray(value)
      ? value.map((v) => (Buffer.isBuffer(v) ? Buffer.from(v) : v))
      : Buffer.isBuffer(value)
        ? Buffer.from(value)
        : value;
  }
  return { ...record, key: own(record.key), value: own(record.value), headers };
}
