import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Every metric of the delivery log (docs/reference/observability.md), registered on the service's registry. */
export class DeliveryLogMetrics {
  /** Records written to the database. */
  readonly ingested: Counter;
  /** Records read but not kept (unreadable, replay markers, past retention), by topic. */
  readonly skipped: Counter<'topic'>;
  /** Seconds one ingestion transaction took. */
  readonly batchSeconds: Histogram;
  /** Messages deleted by the pruning job. */
  readonly pruned: Counter;
  /** Messages evicted, the oldest first, because the log's tables passed their size cap. */
  readonly evicted: Counter;
  /** Bytes the log's tables take (indexes included), as last measured. */
  readonly sizeBytes: Gauge;
  /** API requests, by route and status. */
  readonly requests: Counter<'route' | 'status'>;
  /**
   * Failed authentications of the API, by reason (`missing`, `invalid`, `expired`, `portal_malformed`,
   * `portal_bad_signature`, `portal_expired`, `portal_minter_revoked`, `limited`: refused 429).
   */
  readonly authFailures: Counter<'reason'>;
  /** Replays asked for through the API, and dead letters they re-injected. */
  readonly replayed: Counter;
  /** Events kept as text instead of JSON, by reason (`EVENT_NOTES`). */
  readonly keptAsText: Counter<'reason'>;
  /** Records the database refused (kept in the `unstored` table), by kind and reason. */
  readonly unstored: Counter<'kind' | 'reason'>;
  /** Rows removed by deletion requests, by table (`messages`, `rejections`). */
  readonly deleted: Counter<'table'>;
  /** The ledger (docs/delivery-log.md, "Ledger"), per destination, as last computed: deliveries unaccounted for. */
  readonly unaccounted: Gauge<'destination'>;
  /** Deliveries accepted and not settled (parked and unaccounted included). */
  readonly inFlight: Gauge<'destination'>;
  /** Unsettled deliveries of a parked (paused, disabled) destination. */
  readonly parked: Gauge<'destination'>;
  /** Age in seconds of the oldest unsettled delivery (0: none). */
  readonly oldestUnsettled: Gauge<'destination'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.ingested = new Counter({
      name: 'sluice_delivery_log_ingested_total',
      help: 'Records written to the delivery log',
      registers,
    });
    this.skipped = new Counter({
      name: 'sluice_delivery_log_skipped_total',
      help: 'Records read but not kept, by topic',
      labelNames: ['topic'],
      registers,
    });
    this.batchSeconds = new Histogram({
      name: 'sluice_delivery_log_batch_seconds',
      help: 'Time of one ingestion transaction',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.pruned = new Counter({
      name: 'sluice_delivery_log_pruned_total',
      help: 'Messages deleted past retention',
      registers,
    });
    this.evicted = new Counter({
      name: 'sluice_delivery_log_evicted_total',
      help: 'Messages evicted, oldest first, over the size cap',
      registers,
    });
    this.sizeBytes = new Gauge({
      name: 'sluice_delivery_log_size_bytes',
      help: "Bytes of the delivery log's tables, indexes included",
      registers,
    });
    this.requests = new Counter({
      name: 'sluice_delivery_log_requests_total',
      help: 'API requests by route and status',
      labelNames: ['route', 'status'],
      registers,
    });
    this.authFailures = new Counter({
      name: 'sluice_delivery_log_auth_failures_total',
      help: 'Failed authentications of the API by reason (missing, invalid, expired, limited)',
      labelNames: ['reason'],
      registers,
    });
    this.replayed = new Counter({
      name: 'sluice_delivery_log_replayed_total',
      help: 'Dead letters re-injected through the API',
      registers,
    });
    this.keptAsText = new Counter({
      name: 'sluice_delivery_log_events_kept_as_text_total',
      help: 'Events kept as text instead of JSON, by reason',
      labelNames: ['reason'],
      registers,
    });
    this.unstored = new Counter({
      name: 'sluice_delivery_log_unstored_total',
      help: 'Records the database refused, by kind and reason',
      labelNames: ['kind', 'reason'],
      registers,
    });
    this.deleted = new Counter({
      name: 'sluice_delivery_log_deleted_total',
      help: 'Rows removed by deletion requests, by table',
      labelNames: ['table'],
      registers,
    });
    const labelNames = ['destination'] as const;
    this.unaccounted = new Gauge({
      name: 'sluice_delivery_log_unaccounted_events',
      help: 'Deliveries neither settled nor in the retry path past the retry window plus the grace, by destination',
      labelNames,
      registers,
    });
    this.inFlight = new Gauge({
      name: 'sluice_delivery_log_in_flight_events',
      help: 'Deliveries accepted and not yet settled, by destination',
      labelNames,
      registers,
    });
    this.parked = new Gauge({
      name: 'sluice_delivery_log_parked_events',
      help: 'Unsettled deliveries of a paused or disabled destination',
      labelNames,
      registers,
    });
    this.oldestUnsettled = new Gauge({
      name: 'sluice_delivery_log_oldest_unsettled_seconds',
      help: 'Age of the oldest unsettled delivery by destination (0: none)',
      labelNames,
      registers,
    });
  }
}
