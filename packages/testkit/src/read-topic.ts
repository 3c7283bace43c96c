import type { Kafka } from 'kafkajs';
import { uniqueName } from './names.ts';

export interface TopicRecord {
  partition: number;
  offset: string;
  key: string | null;
  value: Buffer | null;
  headers: Record<string, string>;
}

/**
 * Reads a topic from the beginning with a fresh group until `count` records arrived (then waits
 * `settleMs` more to catch extras) or `timeoutMs` passed. Returns what it read.
 */
export async function readTopic(
  kafka: Kafka,
  topic: string,
  options: { count: number; timeoutMs?: number; settleMs?: number },
): Promise<TopicRecord[]> {
  const consumer = kafka.consumer({ groupId: uniqueName('reader'), maxWaitTimeInMs: 100 });
  const records: TopicRecord[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let reached: () => void;
  const enough = new Promise<void>((resolve) => (reached = resolve));
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(message.headers ?? {}))
        if (v !== undefined) headers[k] = String(Array.isArray(v) ? v[0] : v);
      records.push({
        partition,
        offset: message.offset,
        key: message.key?.toString() ?? null,
        value: message.value,
        headers,
      });
      if (records.length >= options.count) reached();
    },
  });
  const timeout = new Promise<void>((resolve) => setTimeout(resolve, options.timeoutMs ?? 15_000).unref());
  await Promise.race([enough, timeout]);
  if (options.settleMs) await new Promise((r) => setTimeout(r, options.settleMs));
  await consumer.disconnect();
  return records;
}

/** Parses each record's value as JSON. */
export function jsonValues<T = Record<string, unknown>>(records: TopicRecord[]): T[] {
  return records.map((r) => JSON.parse(r.value?.toString() ?? 'null') as T);
}
