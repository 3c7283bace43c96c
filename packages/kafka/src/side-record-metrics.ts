import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * How a service's side records (the deliverer's attempts, retries and dead letters, the retry
 * service's forwards and dead letters) leave: records per `sendBatch` and the time each batch
 * took until Kafka acknowledged it, tries after an outage included, and the records Kafka refused
 * for their own content (docs/reference/observability.md).
 */
export class SideRecordMetrics {
  readonly perSend: Histogram;
  readonly writeSeconds: Histogram;
  readonly refused: Counter<'topic' | 'reason'>;

  private constructor(registry: Registry) {
    this.perSend = new Histogram({
      name: 'sluice_side_records_per_send',
      help: 'Records in one Kafka sendBatch of side records (attempts, retries, forwards, dead letters)',
      buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2000],
      registers: [registry],
    });
    this.writeSeconds = new Histogram({
      name: 'sluice_side_record_write_seconds',
      help: 'Time from the start of a sendBatch of side records to its acknowledgement, tries included',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 10, 60],
      registers: [registry],
    });
    this.refused = new Counter({
      name: 'sluice_side_records_refused_total',
      help: 'Side records Kafka refused for their own content (reason: the broker error, e.g. MESSAGE_TOO_LARGE), never written',
      labelNames: ['topic', 'reason'],
      registers: [registry],
    });
  }

  /** The registry's instance: one per registry, however many batchers write to it. */
  static in(registry: Registry): SideRecordMetrics {
    const known = instances.get(registry);
    if (known) return known;
    const created = new SideRecordMetrics(registry);
    instances.set(registry, created);
    return created;
  }

  written(records: number, ms: number): void {
    this.perSend.observe(records);
    this.writeSeconds.observe(ms / 1_000);
  }
}

const instances = new WeakMap<Registry, SideRecordMetrics>();
