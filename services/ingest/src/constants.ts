/** Defaults of ingest's Kafka side that are not in the config file. */
export const INGEST_DEFAULTS = {
  /** SafeProducer instances (each idempotent, acks=-1, one request in flight); batches go round-robin. */
  producers: 2,
  /** Largest `sendBatch` in value+key bytes, below the broker's default 1 MB record-batch limit. */
  maxBatchBytes: 800_000,
  /** `sendBatch` calls in flight at once, across producers. */
  maxInFlight: 4,
} as const;
