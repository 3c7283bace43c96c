import type { SluiceConfig } from '@sluice/config';
import { retryStateToHeaders, type AttemptEvent, type DeadReason, type RetryState } from '@sluice/envelope';
import type { RecordSink } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import { endSpan, headersOf, SpanKind, type Tracing } from '@sluice/tracing';
import { attemptEvent, attemptRecords, deferralEvent } from './attempt-events.ts';
import type { AttemptResult } from '../transport/attempt-result.ts';
import { deferralWaitMs, type Deferred } from './deferral.ts';
import { stateAfterAttempt, type DeliveryJob } from '../intake/delivery-job.ts';
import { decidePart, type PartDecision } from './part-decision.ts';
import type { IsolationMetrics } from './isolation-metrics.ts';
import type { DelivererMetrics } from '../service/metrics.ts';

export interface SettleDeps {
  sink: RecordSink;
  metrics: DelivererMetrics;
  logger: Logger;
  isolation: IsolationMetrics;
  now: () => number;
  /** Uniform in [0, 1): the jitter of deferral waits. */
  random: () => number;
  /** Told of every attempt result and dead letter (destination health: auto-disable, operator events). */
  watch?: OutcomeWatch;
  /** A dead letter's span (docs/reference/observability.md, "Tracing"). */
  tracing?: Tracing;
}

/** What the settling tells of its outcomes: each attempt's result and each dead letter. */
export interface OutcomeWatch {
  attempted(destinationId: string, result: AttemptResult): void;
  deadLettered(destinationId: string): void;
}

/** The batch an event went in (docs/reference/batches.md): carried on its attempt records. */
export interface BatchRef {
  batchId: string;
  batchSize: number;
}

/**
 * What one attempt's records are written under: the job, its attempt number, the config of its
 * round, and the batch it went in.
 */
export interface AttemptContext {
  job: DeliveryJob;
  attempt: number;
  config: SluiceConfig;
  batch?: BatchRef;
}

/** A dead letter without an attempt: why, and the window's start standing as the first attempt time of a job never attempted. */
export interface DeadLetter {
  reason: DeadReason;
  lastError: string;
  windowOpenedAt?: number;
}

/** One attempt round of one job: what its endpoints' requests gave it, and which endpoints were held back. */
export interface Round {
  attempt: number;
  /** When the round started (the first attempt time of a job never attempted before). */
  startedAt: number;
  results: AttemptResult[];
  deferred: Deferred[];
  batch?: BatchRef;
}

/**
 * Settles a destination's part of an event after one round, the same for a single request and for
 * a batch (docs/reference/delivery.md): `decidePart`, one `sluice.attempts` record per request
 * and per endpoint held back, then done, `sluice.retry` or `sluice.dead-letter`. Resolves when
 * those records are acknowledged.
 */
export class Settler {
  private readonly deps: SettleDeps;
  constructor(deps: SettleDeps) {
    this.deps = deps;
  }

  async settle(job: DeliveryJob, round: Round, config: SluiceConfig): Promise<PartDecision> {
    const { results, deferred, attempt, startedAt, batch } = round;
    const ctx: AttemptContext = { job, attempt, config, ...(batch && { batch }) };
    const decision = decidePart(results, deferred);
    const decidedAt = this.deps.now();
    const writes = results.map((r) => this.recordAttempt(ctx, r));
    for (const d of deferred) writes.push(this.#recordDeferral(ctx, d, decidedAt));
    const { metrics } = this.deps;
    const destination = job.destinationId;
    switch (decision.kind) {
      case 'delivered': {
        metrics.delivered.inc({ destination });
        const receivedAt = job.receivedAt ?? job.previous?.receivedAt;
        const since = receivedAt === undefined ? NaN : Date.parse(receivedAt);
        if (!Number.isNaN(since))
          metrics.endToEnd.observe({ destination }, Math.max(0, this.deps.now() - since) / 1_000);
        break;
      }
      case 'retry': {
        // Endpoints held back after the others failed permanently: their wait is the deferral's.
        const retried = results.some((r) => r.outcome === 'retryable');
        const heldOnly = decision.retryAfterMs === undefined && deferred.length > 0 && !retried;
        const retryAfterMs = heldOnly ? this.#deferralWait(ctx, deferred, decidedAt) : decision.retryAfterMs;
        const state = stateAfterAttempt(job, startedAt, {
          records: attemptRecords(attempt, results),
          endpoints: decision.endpoints,
          lastError: decision.lastError,
          ...(retryAfterMs !== undefined && { retryAfterMs }),
        });
        writes.push(
          this.deps.sink.send(config.kafka.topics.retry, {
            key: job.key,
            value: job.body,
            headers: { ...retryStateToHeaders(state), ...job.trace },
          }),
        );
        metrics.retried.inc({ destination });
        break;
      }
      case 'defer': {
        const state = stateAfterAttempt(job, startedAt, {
          endpoints: decision.endpoints,
          lastError: decision.lastError,
          retryAfterMs: this.#deferralWait(ctx, deferred, decidedAt),
        });
        // No attempt was made: the count and the history stay where the previous attempt left them.
        state.attempts = job.previous?.attempts ?? 0;
        state.deferrals = (job.previous?.deferrals ?? 0) + 1;
        const headers = { ...retryStateToHeaders(state), ...job.trace };
        writes.push(this.deps.sink.send(config.kafka.topics.retry, { key: job.key, value: job.body, headers }));
        break;
      }
      case 'dead': {
        // The dead letter names every endpoint tried, so a replay retries them all.
        const state = stateAfterAttempt(job, startedAt, {
          records: attemptRecords(attempt, results),
          endpoints: results.map((r) => r.endpoint),
          ...(decision.lastError !== undefined && { lastError: decision.lastError }),
        });
        writes.push(this.#writeDead(ctx, state, decision.reason));
        break;
      }
    }
    await (writes.length === 1 ? writes[0] : Promise.all(writes));
    return decision;
  }

  /**
   * Dead-letters a job without attempting it (destination gone, disabled, no endpoint left, or its
   * window closed).
   */
  deadLetter(job: DeliveryJob, dead: DeadLetter, config: SluiceConfig): Promise<void> {
    const state = stateAfterAttempt(job, dead.windowOpenedAt ?? this.deps.now(), {
      endpoints: job.endpoints,
      lastError: dead.lastError,
    });
    // No attempt was made: the count stays where the previous attempt left it.
    state.attempts = job.previous?.attempts ?? 0;
    return this.#writeDead({ job, config }, state, dead.reason);
  }

  recordAttempt(ctx: AttemptContext, r: AttemptResult): Promise<void> {
    this.deps.watch?.attempted(ctx.job.destinationId, r);
    return this.#sendAttempt(ctx, attemptEvent(ctx.job, ctx.attempt, r));
  }

  #deferralWait(ctx: AttemptContext, deferred: readonly Deferred[], now: number): number {
    const { job, config } = ctx;
    const previous = job.previous;
    return deferralWaitMs({
      deferred,
      now,
      steps: (previous?.attempts ?? 0) + (previous?.deferrals ?? 0),
      scheduleMs: config.retry.scheduleMs,
      jitter: config.retry.jitter,
      random: this.deps.random,
    });
  }

  /** The record of an endpoint held back: no request, the reason as its outcome. */
  #recordDeferral(ctx: AttemptContext, d: Deferred, at: number): Promise<void> {
    this.deps.isolation.deferred.inc({ destination: ctx.job.destinationId, reason: d.reason });
    // Held back, so in no request: the record carries no batch.
    return this.#sendAttempt(
      { job: ctx.job, config: ctx.config },
      deferralEvent(ctx.job, d, { attempt: ctx.attempt, at }),
    );
  }

  #sendAttempt(ctx: Pick<AttemptContext, 'job' | 'config' | 'batch'>, event: AttemptEvent): Promise<void> {
    const { job, config, batch } = ctx;
    if (batch !== undefined) {
      event.batchId = batch.batchId;
      event.batchSize = batch.batchSize;
    }
    const value = JSON.stringify(event);
    return this.deps.sink.send(
      config.kafka.topics.attempts,
      job.trace ? { key: job.key, value, headers: job.trace } : { key: job.key, value },
    );
  }

  #writeDead(ctx: Pick<AttemptContext, 'job' | 'config'>, state: RetryState, reason: DeadReason): Promise<void> {
    const { job, config } = ctx;
    const dead: RetryState = { ...state, deadReason: reason, deadAt: this.deps.now() };
    this.deps.metrics.deadLettered.inc({ destination: job.destinationId, reason });
    this.deps.watch?.deadLettered(job.destinationId);
    this.deps.logger.info(
      { messageId: job.messageId, destinationId: job.destinationId, reason },
      'event dead-lettered',
    );
    let trace = job.trace;
    if (this.deps.tracing?.traces(trace)) {
      const span = this.deps.tracing.start('dead-letter', trace, {
        kind: SpanKind.PRODUCER,
        attributes: {
          'sluice.message_id': job.messageId,
          'sluice.destination': job.destinationId,
          'sluice.reason': reason,
        },
      });
      trace = headersOf(span);
      endSpan(span);
    }
    return this.deps.sink.send(config.kafka.topics.deadLetter, {
      key: job.key,
      value: job.body,
      headers: { ...retryStateToHeaders(dead), ...trace },
    });
  }
}
