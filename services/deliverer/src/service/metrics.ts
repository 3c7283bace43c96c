import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { AttemptResult } from '../transport/attempt-result.ts';

const LATENCY_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const END_TO_END_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3_600, 14_400];

/** Every metric of the deliverer (docs/reference/observability.md); names are documented in docs/deliverer.md. */
export class DelivererMetrics {
  readonly attempts: Counter<'destination' | 'outcome' | 'status_class'>;
  readonly attemptDuration: Histogram<'destination' | 'outcome'>;
  readonly endToEnd: Histogram<'destination'>;
  readonly delivered: Counter<'destination'>;
  readonly retried: Counter<'destination'>;
  readonly deadLettered: Counter<'destination' | 'reason'>;
  readonly inFlight: Gauge<'destination'>;
  readonly rejected: Counter<'topic' | 'code'>;
  readonly autoDisabled: Counter<'destination'>;
  readonly operatorEvents: Counter<'type' | 'outcome'>;
  readonly filtered: Counter<'destination'>;
  readonly parked: Counter<'destination'>;
  readonly orderingWaiting: Counter<'destination'>;
  readonly orderingCycled: Counter<'destination'>;
  readonly orderingUnordered: Counter<'destination'>;
  readonly orderingStateBytes: Gauge;
  readonly orderingHeldBytes: Gauge;
  readonly orderingWaits: Gauge<'kind'>;
  readonly orderingLongestStep: Gauge<'destination' | 'step'>;
  readonly orderingStateWritten: Counter;
  readonly parkedLag: Gauge<'destination'>;
  readonly stateApplied: Gauge<'partition'>;
  #inFlightSource: () => Iterable<[string, number]> = () => [];
  #orderingStateSource: () => number = () => 0;
  #orderingWaitsSource: () => Record<string, number> = () => ({});
  #orderingLongestStepSource: () => { destinationId: string; kind: string; ms: number } | undefined = () => undefined;
  #stateAppliedSource: () => Iterable<[number, number]> = () => [];

  constructor(registry: Registry) {
    const registers = [registry];
    this.attempts = new Counter({
      name: 'sluice_deliverer_attempts_total',
      help: 'Webhook requests made, by destination, outcome (success|retryable|permanent) and status class (2xx..5xx, or error)',
      labelNames: ['destination', 'outcome', 'status_class'],
      registers,
    });
    this.attemptDuration = new Histogram({
      name: 'sluice_deliverer_attempt_duration_seconds',
      help: 'Time from sending a webhook request to its answer (or failure)',
      labelNames: ['destination', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.endToEnd = new Histogram({
      name: 'sluice_deliverer_end_to_end_seconds',
      help: 'Time from ingest receiving an event (receivedAt) to its delivery',
      labelNames: ['destination'],
      buckets: END_TO_END_BUCKETS,
      registers,
    });
    this.delivered = new Counter({
      name: 'sluice_deliverer_delivered_total',
      help: 'Events delivered (an endpoint answered 2xx)',
      labelNames: ['destination'],
      registers,
    });
    this.retried = new Counter({
      name: 'sluice_deliverer_retried_total',
      help: 'Events handed to the retry service after a retryable failure',
      labelNames: ['destination'],
      registers,
    });
    this.deadLettered = new Counter({
      name: 'sluice_deliverer_dead_lettered_total',
      help: 'Events the deliverer sent to the dead-letter topic, by reason',
      labelNames: ['destination', 'reason'],
      registers,
    });
    const metrics = this;
    this.inFlight = new Gauge({
      name: 'sluice_deliverer_in_flight_requests',
      help: 'Webhook requests in flight, by destination',
      labelNames: ['destination'],
      registers,
      // Read from the per-destination caps at scrape time: no gauge update per request.
      collect() {
        this.reset();
        for (const [destination, n] of metrics.#inFlightSource()) this.set({ destination }, n);
      },
    });
    this.rejected = new Counter({
      name: 'sluice_deliverer_rejected_records_total',
      help: 'Records sent to the rejected topic, by source topic and reason (the closed set REJECT_REASONS)',
      labelNames: ['topic', 'code'],
      registers,
    });
    this.autoDisabled = new Counter({
      name: 'sluice_deliverer_auto_disabled_total',
      help: 'Endpoints disabled after no 2xx for delivery.autoDisable.after while attempts were made',
      labelNames: ['destination'],
      registers,
    });
    this.operatorEvents = new Counter({
      name: 'sluice_deliverer_operator_events_total',
      help: 'Operator events by type and outcome (sent, failed after its retries, dropped)',
      labelNames: ['type', 'outcome'],
      registers,
    });
    this.filtered = new Counter({
      name: 'sluice_deliverer_filtered_total',
      help: "Events a destination's filter refused: recorded as filtered, never attempted",
      labelNames: ['destination'],
      registers,
    });
    this.parked = new Counter({
      name: 'sluice_deliverer_parked_total',
      help: 'Events written to their destination parked topic (destination paused or disabled, or its parked topic still draining)',
      labelNames: ['destination'],
      registers,
    });
    this.orderingWaiting = new Counter({
      name: 'sluice_deliverer_ordering_waiting_total',
      help: "Events of an ordered destination written to its waiting topic behind their user's head",
      labelNames: ['destination'],
      registers,
    });
    this.orderingCycled = new Counter({
      name: 'sluice_deliverer_ordering_cycled_total',
      help: 'Waiting records written again at the tail of their waiting topic (their turn had not come)',
      labelNames: ['destination'],
      registers,
    });
    this.orderingUnordered = new Counter({
      name: 'sluice_deliverer_ordering_unordered_total',
      help: 'Events of an ordered destination not held in order: a new queue was refused, the ordering state memory budget (delivery.orderingStateBytes) being spent',
      labelNames: ['destination'],
      registers,
    });
    this.orderingStateBytes = new Gauge({
      name: 'sluice_deliverer_ordering_state_bytes',
      help: 'Bytes of the per-user ordering queues held in memory (all partitions), counted against delivery.orderingStateBytes',
      registers,
      collect() {
        this.set(metrics.#orderingStateSource());
      },
    });
    this.orderingHeldBytes = new Gauge({
      name: 'sluice_deliverer_ordering_held_bytes',
      help: "Body bytes of the events of ordered destinations waiting in memory behind their users' attempts in flight (slots given back)",
      registers,
    });
    this.orderingWaits = new Gauge({
      name: 'sluice_deliverer_ordering_waits',
      help: "What waits in the ordering now, by kind: users' attempts in flight (flights), events in memory behind them (held), waiting records waiting for their turn in their slot (turn_in_slot) or with it given back (turn_in_memory), idle until their partition's next progress (idle), and steps waiting for an earlier step of their user (chained)",
      labelNames: ['kind'],
      registers,
      collect() {
        this.reset();
        for (const [kind, n] of Object.entries(metrics.#orderingWaitsSource())) this.set({ kind }, n);
      },
    });
    this.orderingLongestStep = new Gauge({
      name: 'sluice_deliverer_ordering_longest_step_seconds',
      help: "How long the step of a user's queue running longest now has run (destination, step: fresh, retry, release, waiting, landed, left); no series while none runs",
      labelNames: ['destination', 'step'],
      registers,
      collect() {
        this.reset();
        const step = metrics.#orderingLongestStepSource();
        if (step) this.set({ destination: step.destinationId, step: step.kind }, step.ms / 1_000);
      },
    });
    this.orderingStateWritten = new Counter({
      name: 'sluice_deliverer_ordering_state_written_bytes_total',
      help: 'Bytes (key + value) of the records written to the ordering state topic (sluice.ordering)',
      registers,
    });
    this.parkedLag = new Gauge({
      name: 'sluice_deliverer_parked_lag',
      help: 'Records of a destination parked topic not yet delivered (read while it is stopped or draining)',
      labelNames: ['destination'],
      registers,
    });
    this.stateApplied = new Gauge({
      name: 'sluice_destination_state_applied_offset',
      help: 'Per partition of the destination-state topic, the offset after the last record the deliverer has applied',
      labelNames: ['partition'],
      registers,
      // Read from the state reader at scrape time: a state written at offset o is in force once this passes o.
      collect() {
        this.reset();
        for (const [partition, offset] of metrics.#stateAppliedSource())
          this.set({ partition: String(partition) }, offset);
      },
    });
  }

  /** Where `sluice_destination_state_applied_offset` reads its values (the destination-state reader). */
  readStateAppliedFrom(source: () => Iterable<[number, number]>): void {
    this.#stateAppliedSource = source;
  }

  /** Where `sluice_deliverer_in_flight_requests` reads its values (the delivery's caps). */
  readInFlightFrom(source: () => Iterable<[string, number]>): void {
    this.#inFlightSource = source;
  }

  /** Where `sluice_deliverer_ordering_state_bytes` reads its value (the ordering queues held). */
  readOrderingStateFrom(source: () => number): void {
    this.#orderingStateSource = source;
  }

  /** Where `sluice_deliverer_ordering_waits` reads its values (the ordering), by kind. */
  readOrderingWaitsFrom(source: () => Record<string, number>): void {
    this.#orderingWaitsSource = source;
  }

  /** Where `sluice_deliverer_ordering_longest_step_seconds` reads the longest-running step of a user's queue. */
  readOrderingLongestStepFrom(source: () => { destinationId: string; kind: string; ms: number } | undefined): void {
    this.#orderingLongestStepSource = source;
  }

  attempt(destination: string, result: AttemptResult): void {
    const statusClass = result.status !== undefined ? `${Math.floor(result.status / 100)}xx` : 'error';
    this.attempts.inc({ destination, outcome: result.outcome, status_class: statusClass });
    this.attemptDuration.observe({ destination, outcome: result.outcome }, result.latencyMs / 1_000);
  }
}
