import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Every metric of the retry service (docs/reference/observability.md), registered on the service's registry. */
export class RetryMetrics {
  /** Retries placed on a tier when they arrive from `sluice.retry`, by tier. */
  readonly scheduled: Counter<'tier'>;
  /** Records moved from one tier to a shorter one (or the same) because they were not due yet. */
  readonly retiered: Counter<'from' | 'to'>;
  readonly forwarded: Counter;
  /** Seconds between a record's due time and the acknowledgement of its forward. */
  readonly lateness: Histogram;
  /** Forwards acknowledged before their due time. A tripwire: it must stay 0. */
  readonly early: Counter;
  readonly deadLetters: Counter<'reason'>;
  readonly rejected: Counter<'code'>;
  /** Records the shortest tier holds in memory waiting for their due time. */
  readonly held: Gauge;

  constructor(registry: Registry) {
    const registers = [registry];
    this.scheduled = new Counter({
      name: 'sluice_retry_scheduled_total',
      help: 'Retries scheduled, by delay tier',
      labelNames: ['tier'],
      registers,
    });
    this.retiered = new Counter({
      name: 'sluice_retry_retiered_total',
      help: 'Records moved to another tier after their span',
      labelNames: ['from', 'to'],
      registers,
    });
    this.forwarded = new Counter({
      name: 'sluice_retry_forwarded_total',
      help: 'Due retries forwarded to the redeliver topic',
      registers,
    });
    this.lateness = new Histogram({
      name: 'sluice_retry_lateness_seconds',
      help: 'Time from a retry due time to its forward being acknowledged',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers,
    });
    this.early = new Counter({
      name: 'sluice_retry_early_total',
      help: 'Retries forwarded before their due time (must stay 0)',
      registers,
    });
    this.deadLetters = new Counter({
      name: 'sluice_retry_dead_letters_total',
      help: 'Events sent to the dead-letter topic, by reason',
      labelNames: ['reason'],
      registers,
    });
    this.rejected = new Counter({
      name: 'sluice_retry_rejected_total',
      help: 'Unreadable records sent to the rejected topic',
      labelNames: ['code'],
      registers,
    });
    this.held = new Gauge({
      name: 'sluice_retry_held_records',
      help: 'Records of the shortest tier held in memory until due',
      registers,
    });
  }
}
