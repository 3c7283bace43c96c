import type { Destination, Endpoint, SluiceConfig } from '@sluice/config';
import {
  retryStateToHeaders,
  type AttemptEvent,
  type AttemptRecord,
  type DeadReason,
  type RetryState,
} from '@sluice/envelope';
import type { Logger } from '@sluice/logging';
import type { RecordSink } from '@sluice/kafka';
import type { TimedOutRequest } from './adapters/timeout-log.ts';
import type { WebhookClient } from './adapters/webhook-client.ts';
import type { AttemptResult } from './domain/attempt-result.ts';
import { decide, type Decision } from './domain/decide.ts';
import { attemptNumber, stateAfterAttempt, type DeliveryJob } from './domain/delivery-job.ts';
import { requestHeaders } from './domain/request-headers.ts';
import { signatureHeaders } from './domain/signature-headers.ts';
import { TIMEOUT_CODE } from './errors.ts';
import type { DelivererMetrics } from './metrics.ts';
import { Semaphore } from './semaphore.ts';

export interface DeliveryDeps {
  /** The config in force; read once per job so a reload applies to deliveries that start after it. */
  config: () => SluiceConfig;
  client: WebhookClient;
  sink: RecordSink;
  metrics: DelivererMetrics;
  logger: Logger;
  now?: () => number;
  /** Told of every request that timed out (the rate-limited timeout log). */
  onTimeout?: (request: TimedOutRequest) => void;
}

/**
 * Makes one attempt of a job: POSTs the body to every wanted endpoint of the destination at once
 * (each request under the destination's in-flight cap), records every attempt on
 * `sluice.attempts`, and hands the event on per docs/reference/delivery.md — done, `sluice.retry`, or
 * `sluice.dead-letter`. Resolves only when every record it wrote is acknowledged.
 */
export class Delivery {
  readonly #caps = new Map<string, Semaphore>();
  readonly #now: () => number;

  private readonly deps: DeliveryDeps;
  constructor(deps: DeliveryDeps) {
    this.deps = deps;
    this.#now = deps.now ?? Date.now;
  }

  async run(job: DeliveryJob, destination: Destination): Promise<Decision> {
    const config = this.deps.config();
    // Endpoints removed from the destination since the job was scheduled are dropped (docs/reference/delivery.md).
    const endpoints = destination.endpoints.filter((e) => job.endpoints.includes(e.url));
    if (endpoints.length === 0) {
      await this.deadLetter(job, 'no_endpoints', `no endpoint of ${destination.id} left to deliver to`);
      return { kind: 'dead', reason: 'no_endpoints' };
    }
    const signature = signatureHeaders(destination.signing, job.messageId, job.body, this.#now());
    const cap = this.#cap(destination.id, config.delivery.maxInFlightPerDestination);
    const startedAt = this.#now();
    const timeoutMs = config.delivery.timeoutMs;
    const results =
      endpoints.length === 1
        ? [await this.#attempt(cap, destination.id, endpoints[0]!, job, signature, timeoutMs)]
        : await Promise.all(
            endpoints.map((endpoint) => this.#attempt(cap, destination.id, endpoint, job, signature, timeoutMs)),
          );
    const attempt = attemptNumber(job);
    const decision = decide(results);
    const writes = results.map((r) => this.#recordAttempt(job, attempt, r, config));
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
        const state = stateAfterAttempt(job, startedAt, attemptRecords(attempt, results), decision);
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

  async #attempt(
    cap: Semaphore,
    destinationId: string,
    endpoint: Endpoint,
    job: DeliveryJob,
    signature: Record<string, string> | undefined,
    timeoutMs: number,
  ): Promise<AttemptResult> {
    if (!cap.tryAcquire()) await cap.acquire();
    try {
      const result = await this.deps.client.send({
        url: endpoint.url,
        headers: requestHeaders(endpoint, job.messageId, signature),
        body: job.body,
        timeoutMs,
      });
      this.deps.metrics.attempt(destinationId, result);
      if (result.error === TIMEOUT_CODE)
        this.deps.onTimeout?.({ destinationId, url: endpoint.url, messageId: job.messageId, timeoutMs });
      return result;
    } finally {
      cap.release();
    }
  }

  #recordAttempt(job: DeliveryJob, attempt: number, r: AttemptResult, config: SluiceConfig): Promise<void> {
    const event: AttemptEvent = {
      messageId: job.messageId,
      sourceId: job.sourceId,
      destinationId: job.destinationId,
      eventType: job.eventType,
      endpoint: r.endpoint,
      attempt,
      outcome: r.outcome,
      latencyMs: r.latencyMs,
      at: new Date(r.at).toISOString(),
    };
    if (r.status !== undefined) event.status = r.status;
    if (r.error !== undefined) event.error = r.error;
    if (r.responseSnippet !== undefined) event.responseSnippet = r.responseSnippet;
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

  #cap(destinationId: string, limit: number): Semaphore {
    let cap = this.#caps.get(destinationId);
    if (!cap) this.#caps.set(destinationId, (cap = new Semaphore(limit)));
    else if (cap.limit !== limit) cap.setLimit(limit);
    return cap;
  }
}

function attemptRecords(attempt: number, results: readonly AttemptResult[]): AttemptRecord[] {
  return results.map((r) => attemptRecord(attempt, r));
}

function attemptRecord(attempt: number, r: AttemptResult): AttemptRecord {
  return {
    attempt,
    endpoint: r.endpoint,
    at: r.at,
    outcome: r.outcome,
    latencyMs: r.latencyMs,
    ...(r.status !== undefined && { status: r.status }),
    ...(r.error !== undefined && { error: r.error }),
  };
}
