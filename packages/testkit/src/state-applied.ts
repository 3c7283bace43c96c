import type { Kafka } from '@sluice/kafka';
import { metric, scrapeMetrics } from './metrics.ts';
import { waitUntil } from './wait.ts';

const APPLIED = /^sluice_destination_state_applied_offset\{[^}]*\bpartition="(\d+)"[^}]*\} (\S+)$/gm;

/**
 * Waits until the service at `base` (its URL or port) has applied every record written so far to
 * the destination-state topic `topic`: its `sluice_destination_state_applied_offset` has reached
 * the topic's end on every partition. What a test waits for after writing a state, instead of
 * guessing how long the service takes to read it.
 */
export async function waitForStateApplied(
  kafka: Kafka,
  options: { topic: string; base: string | number; timeoutMs?: number },
): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  let ends: { partition: number; high: string; low: string }[];
  try {
    ends = await admin.fetchTopicOffsets(options.topic);
  } finally {
    await admin.disconnect();
  }
  const due = ends.filter((p) => Number(p.high) > Number(p.low));
  await waitUntil(
    async () => {
      const applied = new Map<number, number>();
      for (const m of (await scrapeMetrics(options.base)).matchAll(APPLIED)) applied.set(Number(m[1]), Number(m[2]));
      return due.every((p) => (applied.get(p.partition) ?? 0) >= Number(p.high));
    },
    options.timeoutMs ?? 15_000,
    `${options.topic} applied by ${options.base} up to its end`,
  );
}

/**
 * Waits until the service at `base` (its URL or port) has read the runtime-destinations catalog as
 * far as `reader` (a test's own catalog reader, `startTestCatalog`) has: its
 * `sluice_destination_catalog_applied_offset` has reached the reader's. What a test waits for after
 * a change through the catalog's writer, before it relies on the service having it in force.
 */
export async function waitForCatalogApplied(
  reader: { appliedOffset: number },
  options: { base: string | number; timeoutMs?: number },
): Promise<void> {
  await waitUntil(
    async () => (await metric(options.base, 'sluice_destination_catalog_applied_offset')) >= reader.appliedOffset,
    options.timeoutMs ?? 15_000,
    `the catalog applied by ${options.base} as far as the test's reader`,
  );
}
