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
