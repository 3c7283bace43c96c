import type { Kafka, KafkaMessage } from 'kafkajs';
import { randomBytes } from 'node:crypto';
import { retryTransient } from '@sluice/kafka';
import { ReadTimeoutError } from './errors.ts';

export interface ReadRecord {
  partition: number;
  message: KafkaMessage;
}

/**
 * Reads a topic from the beginning up to the high watermarks it had when the read started, then
 * stops: records written meanwhile are not waited for, and a broker that does not deliver fails
 * with `ReadTimeoutError` instead of hanging. Uses a throw-away consumer group that commits nothing.
 */
export async function readToEnd(kafka: Kafka, topic: string, timeoutMs: number): Promise<ReadRecord[]> {
  const admin = kafka.admin();
  await admin.connect();
  let ends: Map<number, bigint>;
  try {
    const offsets = await retryTransient(() => admin.fetchTopicOffsets(topic));
    ends = new Map(offsets.filter((o) => BigInt(o.high) > BigInt(o.low)).map((o) => [o.partition, BigInt(o.high)]));
  } finally {
    await admin.disconnect();
  }
  if (ends.size === 0) return [];

  const consumer = kafka.consumer({
    groupId: `sluice-dead-letters-${randomBytes(6).toString('hex')}`,
    maxWaitTimeInMs: 100,
  });
  const records: ReadRecord[] = [];
  const remaining = new Set(ends.keys());
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  let timer: NodeJS.Timeout | undefined;
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        const end = ends.get(partition);
        if (end === undefined || BigInt(message.offset) >= end) return;
        records.push({ partition, message });
        if (BigInt(message.offset) >= end - 1n) {
          remaining.delete(partition);
          if (remaining.size === 0) done();
        }
      },
    });
    const timeout = new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new ReadTimeoutError(topic, timeoutMs)), timeoutMs)),
    );
    await Promise.race([finished, timeout]);
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
  }
  return records.sort(
    (a, b) => a.partition - b.partition || Number(BigInt(a.message.offset) - BigInt(b.message.offset)),
  );
}
