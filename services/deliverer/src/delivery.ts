import type { Destination, Endpoint, SluiceConfig } from '@sluice/config';
import { retryStateToHeaders, type AttemptEvent, type DeadReason, type RetryState } from '@sluice/envelope';
import type { Logger } from '@sluice/logging';
import type { RecordSink } from '@sluice/kafka';
import { requestHeaders, signatureHeaders } from '@sluice/webhook';
import { DestinationCap, type Progress } from './adapters/destination-cap.ts';
import type { TimedOutRequest } from './adapters/timeout-log.ts';
import type { WebhookClient } from './adapters/webhook-client.ts';
import type { AttemptResult } from './domain/attempt-result.ts';
import { deferralWaitMs, type Deferred } from './domain/deferral.ts';
import { attemptNumber, stateAfterAttempt, type DeliveryJob } from './domain/delivery-job.ts';
import { attemptEvent, attemptRecords, deferralEvent } from './domain/attempt-events.ts';
import { decidePart, type PartDecision } from './domain/part-decision.ts';
import type { EndpointGates } from './endpoint-gates.ts';
import { TIMEOUT_CODE } from './errors.ts';
import type { IsolationMetrics } from './isolation-metrics.ts';
import type { DelivererMetrics } from './metrics.ts';

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
}

/**
 * What became of one endpoint's request: its result, or held back before it was sent. Either names
 * the endpoint by its `ref` (the redacted URL records carry), never by its URL.
 */
type Outcome = AttemptResult | Deferred;
const isDeferred = (o: Outcome): o is Deferred => (o as Deferred).reason !== undefined;

/**
 * Makes one attempt of a job: POSTs the body to every wanted endpoint of the destination at once
 * (each request under the destination's in-flight cap), records every attempt on
 * `sluice.attempts`, and hands the event on per docs/reference/delivery.md — done,
 * `sluice.retry`, or `sluice.dead-letter`. The destination's part is done at the first 2xx:
 * requests still in flight to its other endpoints finish on their own (their attempt records are
 * written when they do). Endpoints held back by their gate (circuit open, `Retry-After`, rate
 * limit) or by a stalled destination get no request: the event goes to the retry path for them
 * (docs/deliverer.md, "Fault isolation"). Resolves when the records it wrote are acknowledged.
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
  readonly #random: () => number;
  /** Requests still in flight after their destination's part was done, and their attempt records. */
  readonly #late = new Set<Promise<void>>();

  private readonly deps: DeliveryDeps;
  constructor(deps: DeliveryDeps) {
    this.deps = deps;
    this.#now = deps.now ?? Date.now;
    this.#random = deps.random ?? Math.random;
  }

  async run(job: DeliveryJob, destination: Destination): Promise<PartDecision> {
    const config = this.deps.config();
    // Endpoints removed from the destination since the job was scheduled are dropped (docs/reference/delivery.md).
    // Records name them by `ref`; a record written before refs existed names the URL itself.
    const endpoints = destination.endpoints.filter(
      (e) => job.endpoints.includes(e.ref) || job.endpoints.includes(e.url),
    );
    if (endpoints.length === 0) {
      await this.deadLetter(job, 'no_endpoints', `no endpoint of ${destination.id} left to deliver to`);
      return { kind: 'dead', reason: 'no_endpoints' };
    }
    const startedAt = this.#now();
    const { gates } = this.deps;
    const deferred: Deferred[] = [];
    const admitted: Admitted[] = [];
    for (const endpoint of endpoints) {
      const gate = gates.admit(destination, endpoint, config, startedAt);
      if (gate.kind === 'send') admitted.push({ endpoint, probe: gate.probe });
      else deferred.push({ endpoint: endpoint.ref, reason: gate.reason, until: gate.until });
    }
    const attempt = attemptNumber(job);
    const results: AttemptResult[] = [];
    if (admitted.length > 0) {
      const signature = signatureHeaders(destination.signing, job.messageId, job.body, this.#now());
      const cap = this.#cap(destination.id, config);
      const timeoutMs = config.delivery.timeoutMs;
      if (admitted.length === 1) {
        const outcome = await this.#attempt(cap, destination.id, admitted[0]!, job, signature, timeoutMs);
        if (isDeferred(outcome)) deferred.push(outcome);
        else results.push(outcome);
      } else {
        const outcomes = admitted.map((a) => this.#attempt(cap, destination.id, a, job, signature, timeoutMs));
        await this.#firstSuccessOrAll(outcomes, results, deferred, job, attempt, config);
      }
    }
    const decision = decidePart(results, deferred);
    const decidedAt = this.#now();
    const writes = results.map((r) => this.#recordAttempt(job, attempt, r, config));
    for (const d of deferred) writes.push(this.#recordDeferral(job, attempt, d, config, decidedAt));
    const { metrics } = this.deps;
    switch (decision.kind) {
      case 'delivered': {
        metrics.delivered.inc({ destination: destination.id });
        const receivedAt = job.receivedAt ?? job.previous?.receivedAt;
        const since = receivedAt === undefined ? NaN : Date.parse(receivedAt);
        if (!Number.isNaN(since))
          metrics.endToEnd.observe({ destination: destination.id }, Math.max(0, this.#now() - since) / 1_000);
        break;
      }
      case 'retry': {
        // Endpoints held back after the others failed permanently: their wait is the deferral's.
        const retried = results.some((r) => r.outcome === 'retryable');
        const heldOnly = decision.retryAfterMs === undefined && deferred.length > 0 && !retried;
        const retryAfterMs = heldOnly ? this.#deferralWait(job, deferred, config, decidedAt) : decision.retryAfterMs;
        const state = stateAfterAttempt(job, startedAt, attemptRecords(attempt, results), {
          endpoints: decision.endpoints,
          lastError: decision.lastError,
          ...(retryAfterMs !== undefined && { retryAfterMs }),
        });
        writes.push(
          this.deps.sink.send(config.kafka.topics.retry, {
            key: job.key,
            value: job.body,
            headers: retryStateToHeaders(state),
          }),
        );
        metrics.retried.inc({ destination: destination.id });
        break;
      }
      case 'defer': {
        const state = stateAfterAttempt(job, startedAt, [], {
          endpoints: decision.endpoints,
          lastError: decision.lastError,
          retryAfterMs: this.#deferralWait(job, deferred, config, decidedAt),
        });
        // No attempt was made: the count and the history stay where the previous attempt left them.
        state.attempts = job.previous?.attempts ?? 0;
        state.deferrals = (job.previous?.deferrals ?? 0) + 1;
        const headers = retryStateToHeaders(state);
        writes.push(this.deps.sink.send(config.kafka.topics.retry, { key: job.key, value: job.body, headers }));
        break;
      }
      case 'dead': {
        // The dead letter names every endpoint tried, so a replay retries them all.
        const state = stateAfterAttempt(job, startedAt, attemptRecords(attempt, results), {
          endpoints: results.map((r) => r.endpoint),
          ...(decision.lastError !== undefined && { lastError: decision.lastError }),
        });
        writes.push(this.#writeDead(job, state, decision.reason, config));
        break;
      }
    }
    await (writes.length === 1 ? writes[0] : Promise.all(writes));
    return decision;
  }

  /**
   * Dead-letters a job without attempting it (destination gone, disabled, no endpoint left, or its
   * window closed). `windowOpenedAt` stands as the first attempt time of a job never attempted.
   */
  async deadLetter(job: DeliveryJob, reason: DeadReason, lastError: string, windowOpenedAt?: number): Promise<void> {
    const config = this.deps.config();
    const state = stateAfterAttempt(job, windowOpenedAt ?? this.#now(), [], { endpoints: job.endpoints, lastError });
    // No attempt was made: the count stays where the previous attempt left it.
    state.attempts = job.previous?.attempts ?? 0;
    await this.#writeDead(job, state, reason, config);
  }

  /** Waits for requests still in flight after their destination was done, and their records (shutdown). */
  async drain(): Promise<void> {
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
    for (const cap of this.#caps.values()) cap.judge(fastest, crowded);
  }

  /**
   * Resolves at the first 2xx or when every request is done, with what finished by then. Requests
   * still in flight then finish on their own: their attempt records are written when they do, and
   * `drain` waits for them.
   */
  #firstSuccessOrAll(
    outcomes: Promise<Outcome>[],
    results: AttemptResult[],
    deferred: Deferred[],
    job: DeliveryJob,
    attempt: number,
    config: SluiceConfig,
  ): Promise<void> {
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
          lateWrites.push(this.#recordAttempt(job, attempt, outcome, config));
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

  async #attempt(
    cap: DestinationCap,
    destinationId: string,
    admitted: Admitted,
    job: DeliveryJob,
    signature: Record<string, string> | undefined,
    timeoutMs: number,
  ): Promise<Outcome> {
    const { endpoint, probe } = admitted;
    let slot = cap.acquire();
    if (slot !== true && slot !== false) slot = await slot;
    if (!slot) {
      this.deps.gates.cancel(destinationId, endpoint.url, admitted);
      return { endpoint: endpoint.ref, reason: 'destination_stalled', until: this.#now() };
    }
    const sentAt = this.#now();
    let timedOut = false;
    try {
      const result = await this.deps.client.send({
        url: endpoint.url,
        headers: requestHeaders(endpoint, job.messageId, signature),
        body: job.body,
        timeoutMs,
      });
      timedOut = result.error === TIMEOUT_CODE;
      this.deps.metrics.attempt(destinationId, result);
      if (result.error === TIMEOUT_CODE)
        this.deps.onTimeout?.({ destinationId, url: endpoint.url, messageId: job.messageId, timeoutMs });
      this.deps.gates.record(destinationId, result, probe, this.#now());
      // From here on the endpoint is named by its ref: results go into records and `lastError`.
      return { ...result, endpoint: endpoint.ref };
    } finally {
      cap.release(this.#now() - sentAt, timedOut);
    }
  }

  #deferralWait(job: DeliveryJob, deferred: readonly Deferred[], config: SluiceConfig, now: number): number {
    const previous = job.previous;
    return deferralWaitMs({
      deferred,
      now,
      steps: (previous?.attempts ?? 0) + (previous?.deferrals ?? 0),
      scheduleMs: config.retry.scheduleMs,
      jitter: config.retry.jitter,
      random: this.#random,
    });
  }

  /** The record of an endpoint held back: no request, the reason as its outcome. */
  #recordDeferral(job: DeliveryJob, attempt: number, d: Deferred, config: SluiceConfig, at: number): Promise<void> {
    this.deps.isolation.deferred.inc({ destination: job.destinationId, reason: d.reason });
    return this.#sendAttempt(job, config, deferralEvent(job, attempt, d, at));
  }

  #recordAttempt(job: DeliveryJob, attempt: number, r: AttemptResult, config: SluiceConfig): Promise<void> {
    return this.#sendAttempt(job, config, attemptEvent(job, attempt, r));
  }

  #sendAttempt(job: DeliveryJob, config: SluiceConfig, event: AttemptEvent): Promise<void> {
    return this.deps.sink.send(config.kafka.topics.attempts, { key: job.key, value: JSON.stringify(event) });
  }

  #writeDead(job: DeliveryJob, state: RetryState, reason: DeadReason, config: SluiceConfig): Promise<void> {
    const dead: RetryState = { ...state, deadReason: reason, deadAt: this.#now() };
    this.deps.metrics.deadLettered.inc({ destination: job.destinationId, reason });
    this.deps.logger.info(
      { messageId: job.messageId, destinationId: job.destinationId, reason },
      'event dead-lettered',
    );
    return this.deps.sink.send(config.kafka.topics.deadLetter, {
      key: job.key,
      value: job.body,
      headers: retryStateToHeaders(dead),
    });
  }

  /** Requests in flight per destination (read by the metrics at scrape time). */
  *inFlight(): Iterable<[string, number]> {
    for (const [destinationId, cap] of this.#caps) yield [destinationId, cap.active];
  }

  #cap(destinationId: string, config: SluiceConfig): DestinationCap {
    const { maxInFlightPerDestination: limit, stallAfterMs } = config.delivery;
    let cap = this.#caps.get(destinationId);
    if (!cap) this.#caps.set(destinationId, (cap = new DestinationCap(limit, stallAfterMs, this.#progress, this.#now)));
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

interface Admitted {
  endpoint: Endpoint;
  probe: boolean;
}
