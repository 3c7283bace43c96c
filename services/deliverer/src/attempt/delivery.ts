import type { Destination, SluiceConfig } from '@sluice/config';
import type { Logger } from '@sluice/logging';
import type { RecordSink } from '@sluice/kafka';
import { type Span, TRACING_OFF, type Tracing } from '@sluice/tracing';
import { requestHeaders, signatureHeaders } from '@sluice/webhook';
import { endDelivery, startDelivery, tracedRequest, traceRequest } from './delivery-trace.ts';
import { DestinationCap, type Progress } from '../transport/destination-cap.ts';
import type { TimedOutRequest } from '../transport/timeout-log.ts';
import type { WebhookClient } from '../transport/webhook-client.ts';
import type { AttemptResult } from '../transport/attempt-result.ts';
import type { Deferred } from './deferral.ts';
import { attemptNumber, type DeliveryJob } from '../intake/delivery-job.ts';
import type { PartDecision } from './part-decision.ts';
import { BatchDelivery } from './batching/batch-delivery.ts';
import { admitEndpoints, isDeferred, sendRequest, type Outcome, type RequestDeps } from './endpoint-request.ts';
import type { EndpointGates } from './endpoint-gates.ts';
import type { IsolationMetrics } from './isolation-metrics.ts';
import type { DelivererMetrics } from '../service/metrics.ts';
import { LogRateLimiter } from '../service/log-rate-limit.ts';
import { type OutcomeWatch, Settler, type AttemptContext, type DeadLetter } from './settle.ts';

/** At most one "held back" line per destination per this many ms. */
export const HELD_BACK_LOG_INTERVAL_MS = 10_000;

export interface DeliveryDeps {
  /** The config in force; read once per job so a reload applies to deliveries that start after it. */
  config: () => SluiceConfig;
  client: WebhookClient;
  sink: RecordSink;
  metrics: DelivererMetrics;
  logger: Logger;
  /** Per-endpoint circuit breakers, `Retry-After` holds and rate limits. */
  gates: EndpointGates;
  isolation: IsolationMetrics;
  now?: () => number;
  /** Told of every request that timed out (the rate-limited timeout log). */
  onTimeout?: (request: TimedOutRequest) => void;
  /** Uniform in [0, 1): the jitter of deferral waits. */
  random?: () => number;
  /**
   * Some partition has half its slots or more taken (`ConcurrentConsumer.crowded`): events waiting
   * for a destination are about to hold back others, so only then is a destination judged stalled.
   * Default: always.
   */
  crowded?: () => boolean;
  /** Told of every attempt result and dead letter (auto-disable, operator events). */
  watch?: OutcomeWatch;
  /** Spans of deliveries, attempts and dead letters (docs/reference/observability.md, "Tracing"); default off. */
  tracing?: Tracing;
}

/**
 * One attempt of a job to its destination, as it goes from admission to settling: what its
 * records are written under, the endpoints admitted and those held back, and its span.
 */
interface Dispatch extends AttemptContext {
  destination: Destination;
  startedAt: number;
  admitted: ReturnType<typeof admitEndpoints>['admitted'];
  deferred: Deferred[];
  span?: Span;
}

/**
 * Makes one attempt of a job: POSTs the body to every wanted endpoint of the destination at once
 * (each request under the destination's in-flight cap), records every attempt on
 * `sluice.attempts`, and hands the event on per docs/reference/delivery.md — done,
 * `sluice.retry`, or `sluice.dead-letter`. The destination's part is done at the first 2xx:
 * requests still in flight to its other endpoints finish on their own (their attempt records are
 * written when they do). Endpoints held back by their gate (circuit open, `Retry-After`, rate
 * limit) or by a stalled destination get no request: the event goes to the retry path for them
 * (docs/deliverer.md, "Fault isolation"). Resolves when the records it wrote are acknowledged.
 * A destination with `batch` set sends its jobs in batches instead (`BatchDelivery`); either way
 * the part is settled by the one `Settler`.
 */
export class Delivery {
  readonly #caps = new Map<string, DestinationCap>();
  /** When any destination's request last finished (a destination's stall is judged against it). */
  readonly #progress: Progress = { finishedAt: Number.NEGATIVE_INFINITY, finished: 0 };
  /** Judges every destination's cap four times per stall time (between event-loop turns). */
  #judging: NodeJS.Timeout | undefined;
  #judgingEveryMs = 0;
  #judgeQueued = false;
  readonly #now: () => number;
  /** Requests still in flight after their destination's part was done, and their attempt records. */
  readonly #late = new Set<Promise<void>>();
  readonly #settler: Settler;
  readonly #requests: RequestDeps;
  readonly #batches: BatchDelivery;
  readonly #tracing: Tracing;
  readonly #heldBackLog: LogRateLimiter;

  private readonly deps: DeliveryDeps;
  constructor(deps: DeliveryDeps) {
    this.deps = deps;
    const now = deps.now ?? Date.now;
    this.#now = now;
    this.#tracing = deps.tracing ?? TRACING_OFF;
    this.#settler = new Settler({ ...deps, now, random: deps.random ?? Math.random, tracing: this.#tracing });
    this.#requests = { client: deps.client, metrics: deps.metrics, gates: deps.gates, now };
    if (deps.onTimeout) this.#requests.onTimeout = deps.onTimeout;
    this.#heldBackLog = new LogRateLimiter({ intervalMs: HELD_BACK_LOG_INTERVAL_MS, now });
    this.#requests.onHeldBack = (destinationId, cap) => this.#heldBack(destinationId, cap);
    this.#batches = new BatchDelivery({
      requests: this.#requests,
      settler: this.#settler,
      now,
      cap: (destinationId, config) => this.#cap(destinationId, config),
      tracing: this.#tracing,
    });
  }

  async run(job: DeliveryJob, destination: Destination): Promise<PartDecision> {
    const config = this.deps.config();
    // Endpoints removed from the destination since the job was scheduled are dropped (docs/reference/delivery.md).
    // Records name them by `ref`; a record written before refs existed names the URL itself.
    const endpoints = destination.endpoints.filter(
      (e) => job.endpoints.includes(e.ref) || job.endpoints.includes(e.url),
    );
    if (endpoints.length === 0) {
      await this.deadLetter(job, {
        reason: 'no_endpoints',
        lastError: `no endpoint of ${destination.id} left to deliver to`,
      });
      return { kind: 'dead', reason: 'no_endpoints' };
    }
    if (destination.batch !== undefined) return this.#batches.add(job, { destination, endpoints, config });
    const startedAt = this.#now();
    const { admitted, deferred } = admitEndpoints(this.deps.gates, endpoints, { destination, config, now: startedAt });
    const dispatch: Dispatch = { job, destination, config, startedAt, attempt: attemptNumber(job), admitted, deferred };
    if (!this.#tracing.traces(job.trace)) return this.#attempt(dispatch);
    const started = startDelivery(this.#tracing, job, { destination, attempt: dispatch.attempt });
    const { span } = started;
    try {
      const decision = await this.#attempt({ ...dispatch, job: started.job, span });
      endDelivery(span, decision.kind);
      return decision;
    } catch (err) {
      endDelivery(span, undefined, (err as Error).message);
      throw err;
    }
  }

  async #attempt(dispatch: Dispatch): Promise<PartDecision> {
    const { job, destination, config, admitted, deferred, span } = dispatch;
    const results: AttemptResult[] = [];
    if (admitted.length > 0) {
      const signature = signatureHeaders(destination.signing, job.messageId, job.body, this.#now());
      const cap = this.#cap(destination.id, config);
      const timeoutMs = config.delivery.timeoutMs;
      const send = (a: (typeof admitted)[number]) => {
        const headers = requestHeaders(a.endpoint, job.messageId, signature);
        const request = { url: a.endpoint.url, headers, body: job.body, timeoutMs };
        if (span)
          return tracedRequest(this.#tracing, { parent: span, endpointRef: a.endpoint.ref, headers }, () =>
            sendRequest(this.#requests, a, { destinationId: destination.id, cap, request, id: job.messageId }),
          );
        // No span (tracing off, or an unsampled parent): the webhook carries the event's trace context as it came.
        if (job.trace) traceRequest(headers, job.trace);
        return sendRequest(this.#requests, a, { destinationId: destination.id, cap, request, id: job.messageId });
      };
      if (admitted.length === 1) {
        const outcome = await send(admitted[0]!);
        if (isDeferred(outcome)) deferred.push(outcome);
        else results.push(outcome);
      } else {
        await this.#firstSuccessOrAll(admitted.map(send), dispatch, results);
      }
    }
    const { attempt, startedAt } = dispatch;
    return this.#settler.settle(job, { attempt, startedAt, results, deferred }, config);
  }

  /**
   * Dead-letters a job without attempting it (destination gone, disabled, no endpoint left, or its
   * window closed).
   */
  deadLetter(job: DeliveryJob, dead: DeadLetter): Promise<void> {
    return this.#settler.deadLetter(job, dead, this.deps.config());
  }

  /** Waits for requests still in flight after their destination was done, and their records (shutdown). */
  async drain(): Promise<void> {
    await this.#batches.drain();
    while (this.#late.size > 0) await Promise.all([...this.#late]);
    if (this.#judging) clearInterval(this.#judging);
    this.#judging = undefined;
    this.#judgingEveryMs = 0;
  }

  /**
   * Judges every destination after the current event-loop turn: called when a partition becomes
   * crowded, so that a stalled destination's waiters leave at once, not at the next tick.
   */
  judgeSoon(): void {
    if (this.#judgeQueued) return;
    this.#judgeQueued = true;
    setImmediate(() => {
      this.#judgeQueued = false;
      this.#judge();
    });
  }

  #judge(): void {
    const crowded = this.deps.crowded?.() ?? true;
    let fastest: number | undefined;
    const now = this.#now();
    for (const cap of this.#caps.values()) {
      const latency = cap.latencyMs;
      if (latency !== undefined && cap.moving(now) && (fastest === undefined || latency < fastest)) fastest = latency;
    }
    const { judged } = this.deps.isolation;
    for (const [destination, cap] of this.#caps) {
      cap.judge(fastest, crowded ? 'crowded' : 'calm');
      judged.set({ destination, state: 'stalled' }, cap.stalled ? 1 : 0);
      judged.set({ destination, state: 'slow' }, cap.slow ? 1 : 0);
    }
  }

  /** A request held back (its event goes to the retry path): said once per destination per interval, never silent. */
  #heldBack(destinationId: string, cap: DestinationCap): void {
    const admission = this.#heldBackLog.admit(destinationId);
    if (!admission.write) return;
    this.deps.logger.warn(
      {
        destinationId,
        judged: cap.stalled ? 'stalled' : 'slow',
        inFlight: cap.active,
        waiting: cap.waiting,
        latencyMs: cap.latencyMs === undefined ? undefined : Math.round(cap.latencyMs),
        suppressed: admission.suppressed,
      },
      'destination judged stalled or slow: its waiting events go to the retry path',
    );
  }

  /**
   * Resolves at the first 2xx or when every request is done, with what finished by then. Requests
   * still in flight then finish on their own: their attempt records are written when they do, and
   * `drain` waits for them.
   */
  #firstSuccessOrAll(outcomes: Promise<Outcome>[], dispatch: Dispatch, results: AttemptResult[]): Promise<void> {
    const { job, deferred } = dispatch;
    return new Promise<void>((resolve, reject) => {
      let pending = outcomes.length;
      let done = false;
      let lateDone: (() => void) | undefined;
      const lateWrites: Promise<void>[] = [];
      const settle = (outcome: Outcome) => {
        pending -= 1;
        if (!done) {
          if (isDeferred(outcome)) deferred.push(outcome);
          else results.push(outcome);
          if (pending === 0 || (!isDeferred(outcome) && outcome.outcome === 'success')) {
            done = true;
            if (pending > 0) this.#track(new Promise<void>((r) => (lateDone = r)));
            resolve();
          }
          return;
        }
        if (!isDeferred(outcome)) {
          this.deps.isolation.lateAttempts.inc({ destination: job.destinationId });
          lateWrites.push(this.#settler.recordAttempt(dispatch, outcome));
        }
        if (pending === 0) finishLate();
      };
      const finishLate = () => {
        void Promise.all(lateWrites).then(lateDone, (err: unknown) => {
          const fields = { err, messageId: job.messageId, destinationId: job.destinationId };
          this.deps.logger.error(fields, 'attempt record of a late request not written');
          lateDone?.();
        });
      };
      const fail = (err: unknown) => {
        pending -= 1;
        if (!done) {
          done = true;
          reject(err as Error);
        } else if (pending === 0) finishLate();
      };
      for (const o of outcomes) o.then(settle, fail);
    });
  }

  #track(p: Promise<void>): void {
    this.#late.add(p);
    void p.finally(() => this.#late.delete(p));
  }

  /** Requests in flight per destination (read by the metrics at scrape time). */
  *inFlight(): Iterable<[string, number]> {
    for (const [destinationId, cap] of this.#caps) yield [destinationId, cap.active];
  }

  #cap(destinationId: string, config: SluiceConfig): DestinationCap {
    const { maxInFlightPerDestination: limit, stallAfterMs } = config.delivery;
    let cap = this.#caps.get(destinationId);
    if (!cap)
      this.#caps.set(
        destinationId,
        (cap = new DestinationCap(limit, stallAfterMs, { progress: this.#progress, now: this.#now })),
      );
    else cap.configure(limit, stallAfterMs);
    const every = Math.max(10, stallAfterMs / 4);
    if (every !== this.#judgingEveryMs) {
      if (this.#judging) clearInterval(this.#judging);
      this.#judging = setInterval(() => this.#judge(), every);
      this.#judging.unref();
      this.#judgingEveryMs = every;
    }
    return cap;
  }
}
