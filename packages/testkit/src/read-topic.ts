import type { Kafka } from 'kafkajs';
import { uniqueName } from './names.ts';

export interface TopicRecord {
  partition: number;
  offset: string;
  key: string | null;
  value: Buffer | null;
  headers: Record<string, string>;
  /** When the watcher read it (`Date.now()`). */
  at: number;
}

export interface TopicWatcher {
  /** Every record of `topic` read so far, in the order read. */
  records(topic: string): TopicRecord[];
  /** Resolves once `topic` has `count` records, or after `timeoutMs` (default 15 s) with what it has. */
  waitFor(topic: string, count: number, timeoutMs?: number): Promise<TopicRecord[]>;
  stop(): Promise<void>;
}

/**
 * The one topic reader of the tests: one consumer in a fresh group that reads `topics` from the
 * beginning in the background and keeps every record with the time it was read, until `stop`.
 */
export async function watchTopics(kafka: Kafka, topics: string[], maxWaitTimeInMs = 50): Promise<TopicWatcher> {
  const consumer = kafka.consumer({ groupId: uniqueName('watch'), maxWaitTimeInMs });
  const seen = new Map<string, TopicRecord[]>(topics.map((t) => [t, []]));
  const waiters = new Set<() => void>();
  await consumer.connect();
  await consumer.subscribe({ topics, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(message.headers ?? {}))
        if (v !== undefined) headers[k] = String(Array.isArray(v) ? v[0] : v);
      seen.get(topic)!.push({
        partition,
        offset: message.offset,
        key: message.key?.toString() ?? null,
        value: message.value,
        headers,
        at: Date.now(),
      });
      for (const wake of waiters) wake();
    },
  });
  const records = (topic: string) => seen.get(topic)!;
  return {
    records,
    waitFor: async (topic, count, timeoutMs = 15_000) => {
      let wake = () => {};
      const enough = new Promise<void>((resolve) => {
        wake = () => records(topic).length >= count && resolve();
        waiters.add(wake);
        wake();
      });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      await Promise.race([enough, timeout]);
      clearTimeout(timer);
      waiters.delete(wake);
      return records(topic);
    },
    stop: () => consumer.disconnect(),
  };
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
  const watcher = await watchTopics(kafka, [topic], 100);
  try {
    await watcher.waitFor(topic, options.count, options.timeoutMs);
    if (options.settleMs) await new Promise((r) => setTimeout(r, options.settleMs));
    return [...watcher.records(topic)];
  } finally {
    await watcher.stop();
  }
}

/** Parses each record's value as JSON. */
export function jsonValues<T = Record<string, unknown>>(records: TopicRecord[]): T[] {
  return records.map((r) => JSON.parse(r.value?.toString() ?? 'null') as T);
}
