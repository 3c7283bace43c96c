import { Counter, Histogram, type Registry } from 'prom-client';

/** Every metric of ingest (docs/reference/observability.md), registered on the service's registry. */
export function createIngestMetrics(registry: Registry) {
  return {
    requests: new Counter({
      name: 'sluice_ingest_requests_total',
      help: 'HTTP requests to the tracking and admin API, by route and status',
      labelNames: ['route', 'status'] as const,
      registers: [registry],
    }),
    events: new Counter({
      name: 'sluice_ingest_events_total',
      help: 'Calls received, by source, type and outcome (accepted | rejected)',
      labelNames: ['source', 'type', 'outcome'] as const,
      registers: [registry],
    }),
    rejected: new Counter({
      name: 'sluice_ingest_rejected_total',
      help: 'Calls rejected (written to sluice.rejected), by reason',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    requestDuration: new Histogram({
      name: 'sluice_ingest_request_duration_seconds',
      help: 'Time from request arrival to response, including the Kafka acknowledgement',
      labelNames: ['route'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    batchSize: new Histogram({
      name: 'sluice_ingest_batch_size',
      help: 'Records per Kafka sendBatch (calls of concurrent requests gathered by the linger)',
      buckets: [1, 10, 50, 100, 250, 500, 1000, 2500, 5000],
      registers: [registry],
    }),
    produceFailures: new Counter({
      name: 'sluice_ingest_produce_failures_total',
      help: 'Requests answered 503 because Kafka did not acknowledge in time',
      registers: [registry],
    }),
    deletions: new Counter({
      name: 'sluice_ingest_deletions_total',
      help: 'Deletion requests accepted, and delete notifications emitted',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
  };
}

export type IngestMetrics = ReturnType<typeof createIngestMetrics>;
