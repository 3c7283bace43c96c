/** Mean records per `sendBatch` ingest made over its life (warm-up included), from its `/metrics`; undefined if unreadable. */
export async function ingestMeanBatchSize(origin: string): Promise<number | undefined> {
  const metrics = await fetch(`${origin}/metrics`).then(
    (r) => r.text(),
    () => '',
  );
  const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(metrics)?.[1]);
  const mean = value('sluice_ingest_batch_size_sum') / value('sluice_ingest_batch_size_count');
  return Number.isFinite(mean) ? mean : undefined;
}
