import { randomUUID } from 'node:crypto';
import type { Admin, Kafka } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';

/**
 * Reads the compacted state topic from the beginning up to the high watermarks seen at start and
 * hands every record to `apply` (docs/reference/audiences.md "rebuilt on start"). A throwaway consumer group that never
 * commits: every start reads the whole (compacted) topic. A Kafka error rejects; the caller's
 * start-up retry runs it again from the beginning.
 */
export async function rebuildState(options: {
  kafka: Kafka;
  admin: Admin;
  topic: string;
  clientId: string;
  logger: Logger;
  apply: (key: string, value: string | null) => void;
}): Promise<number> {
  const { kafka, admin, topic, logger } = options;
  const offsets = await admin.fetchTopicOffsets(topic);
  const remaining = new Map<number, number>();
  for (const p of offsets) if (Number(p.high) > Number(p.low)) remaining.set(p.partition, Number(p.high) - 1);
  if (remaining.size === 0) return 0;
  const consumer = kafka.consumer({
    groupId: `${options.clientId}-audience-state-rebuild-${randomUUID()}`,
    maxWaitTimeInMs: 100,
    maxBytesPerPartition: 4 * 1024 * 1024,
  });
  let count = 0;
  const started = Date.now();
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      consumer.on(consumer.events.CRASH, (e) => reject((e.payload as { error: Error }).error));
      void consumer
        .run({
          autoCommit: false,
          eachBatch: async ({ batch, heartbeat }) => {
            const last = remaining.get(batch.partition);
            if (last === undefined) return;
            for (const m of batch.messages) {
              if (Number(m.offset) > last) break;
              options.apply(m.key?.toString('utf8') ?? '', m.value === null ? null : m.value.toString('utf8'));
              count++;
            }
            await heartbeat();
            // Compaction can remove the last offsets, so "reached" is judged by the batch's end too.
            const end = Number(batch.lastOffset());
            if (end >= last || Number(batch.highWatermark) - 1 <= end) {
              remaining.delete(batch.partition);
              if (remaining.size === 0) resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  logger.info({ records: count, ms: Date.now() - started }, 'audience state rebuilt');
  return count;
}
