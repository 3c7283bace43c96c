import { LIMITS, type SluiceConfig } from '@sluice/config';

/** The ingest settings in force, read from the config at the start of each request (reloads apply). */
export function ingestSettings(config: SluiceConfig) {
  return {
    ...config.ingest,
    topics: { events: config.kafka.topics.events, rejected: config.kafka.topics.rejected },
    /** docs/reference/limits.md, fixed by the contract. */
    maxBodyBytes: LIMITS.batchBytes,
    maxCallBytes: LIMITS.callBytes,
    maxCalls: LIMITS.callsPerBatch,
  };
}

export type IngestSettings = ReturnType<typeof ingestSettings>;
