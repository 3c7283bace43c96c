import type { Kafka } from '@sluice/kafka';

/** Reads a topic from the beginning and calls `onRecord` with each record's headers and read time. */
export async function watchArrivals(
  kafka: Kafka,
  topic: string,
  groupId: string,
  onRecord: (headers: Record<string, string>, readAt: number) => void,
): Promise<() => Promise<void>> {
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 20 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    partitionsConsumedConcurrently: 16,
    eachBatch: async ({ batch }) => {
      const readAt = Date.now();
      for (const message of batch.messages) {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(message.headers ?? {}))
          if (v !== undefined) headers[k] = String(Array.isArray(v) ? v[0] : v);
        onRecord(headers, readAt);
      }
    },
  });
  return () => consumer.disconnect();
}

export interface LatenessSummary {
  count: number;
  early: number;
  p50: number;
  p99: number;
  max: number;
}

/** Lateness in ms (read time − due time); negative values are early arrivals. */
export function summarise(lateness: number[]): LatenessSummary {
  const sorted = [...lateness].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return {
    count: sorted.length,
    early: sorted.filter((l) => l < 0).length,
    p50: at(0.5),
    p99: at(0.99),
    max: sorted.at(-1) ?? NaN,
  };
}

export function formatSummary(name: string, s: LatenessSummary): string {
  return `${name.padEnd(52)} n=${s.count}  early=${s.early}  p50=${s.p50} ms  p99=${s.p99} ms  max=${s.max} ms`;
}
