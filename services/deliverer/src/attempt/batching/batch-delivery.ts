import { randomUUID } from 'node:crypto';
import type { Destination, Endpoint, SluiceConfig } from '@sluice/config';
import { batchItemBytes, batchRequestHeaders, renderBatchBody, signatureHeaders } from '@sluice/webhook';
import type { DestinationCap } from '../../transport/destination-cap.ts';
import type { WebhookRequest } from '../../transport/webhook-client.ts';
import type { AttemptResult } from '../../transport/attempt-result.ts';
import { BatchComposer, type ComposedBatch } from './batch-composer.ts';
import { batchEventResults } from './batch-outcome.ts';
import { attemptNumber, type DeliveryJob } from '../../intake/delivery-job.ts';
import type { PartDecision } from '../part-decision.ts';
import { admitEndpoints, isDeferred, sendRequest, type RequestDeps } from '../endpoint-request.ts';
import type { Settler } from '../settle.ts';
import type { Tracing } from '@sluice/tracing';
import { endDelivery, startBatch, tracedRequest } from '../delivery-trace.ts';

/** Bytes of a batch id: `crypto.randomUUID()`, 36 ASCII characters. */
const BATCH_ID_BYTES = 36;

export interface BatchDeliveryDeps {
  requests: RequestDeps;
  settler: Settler;
  now: () => number;
  /** The destination's in-flight cap (one slot per request, as for single events). */
  cap: (destinationId: string, config: SluiceConfig) => DestinationCap;
  /** A batch's span, linked to its events' traces (docs/reference/batches.md); default off. */
  tracing?: Tracing;
}

/** A destination's part of a job, as `BatchDelivery.add` is given it. */
export interface BatchPart {
  destination: Destination;
  /** The endpoints the job names (the batch key: jobs naming the same ones share a batch). */
  endpoints: Endpoint[];
  config: SluiceConfig;
}

/** A job waiting in an open batch, and how to hand its part's decision back to its `Delivery.run`. */
interface Waiting extends BatchPart {
  job: DeliveryJob;
  resolve: (decision: PartDecision) => void;
  reject: (err: unknown) => void;
}

/**
 * Batched delivery (docs/reference/batches.md) for destinations with `batch` set: jobs of one
 * destination naming the same endpoints gather in a batch (`BatchComposer`); a batch that leaves is
 * ONE request per endpoint its gate admits, under one slot of the destination's cap, with one
 * signature over the whole body. Each event then gets its own result per endpoint (the batch's
 * outcome, or the receiver's per-event result) and is settled exactly as a single event is
 * (`Settler`): its attempt records, with the batch's id and size, then done, retry or dead letter.
 * Each job's promise resolves when its own records are acknowledged. The part is settled once
 * every endpoint's request has finished.
 */
export class BatchDelivery {
  readonly #composer = new BatchComposer<Waiting>(BATCH_ID_BYTES);
  readonly #sending = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Number.POSITIVE_INFINITY;

  private readonly deps: BatchDeliveryDeps;
  constructor(deps: BatchDeliveryDeps) {
    this.deps = deps;
  }

  /** Puts the job in its destination's open batch; resolves with its part's decision once settled. */
  add(job: DeliveryJob, part: BatchPart): Promise<PartDecision> {
    const { destination, endpoints, config } = part;
    const limits = destination.batch!;
    let key = destination.id;
    for (const e of endpoints) key += `\n${e.ref}`;
    return new Promise<PartDecision>((resolve, reject) => {
      const now = this.deps.now();
      const waiting: Waiting = { job, destination, endpoints, config, resolve, reject };
      for (const batch of this.#composer.add({ key, item: waiting, bytes: batchItemBytes(job) }, limits, now))
        this.#start(batch);
      this.#wakeBy(now + limits.maxWaitMs);
    });
  }

  /** Sends every open batch now and waits for all batches in flight (shutdown). */
  async drain(): Promise<void> {
    for (const batch of this.#composer.drain()) this.#start(batch);
    this.#stopTimer();
    while (this.#sending.size > 0) await Promise.all([...this.#sending]);
  }

  /** Makes sure the timer fires by `at` (the wait of a batch that may just have opened). */
  #wakeBy(at: number): void {
    if (this.#timer !== undefined && this.#timerAt <= at) return;
    if (this.#composer.nextDueAt() === undefined) return;
    this.#stopTimer();
    this.#timerAt = at;
    this.#timer = setTimeout(() => this.#onTimer(), Math.max(1, at - this.deps.now()));
  }

  #onTimer(): void {
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    for (const batch of this.#composer.due(this.deps.now())) this.#start(batch);
    const next = this.#composer.nextDueAt();
    if (next !== undefined) this.#wakeBy(next);
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
  }

  #start(batch: ComposedBatch<Waiting>): void {
    const sending = this.#send(batch).catch((err: unknown) => {
      for (const item of batch.items) item.reject(err);
    });
    this.#sending.add(sending);
    void sending.finally(() => this.#sending.delete(sending));
  }

  async #send(batch: ComposedBatch<Waiting>): Promise<void> {
    const { items } = batch;
    const { destination, endpoints, config } = items[0]!;
    const { requests, now } = this.deps;
    const batchId = randomUUID();
    const startedAt = now();
    const { admitted, deferred } = admitEndpoints(requests.gates, endpoints, { destination, config, now: startedAt });
    /** Per admitted endpoint: each event's result, in the batch's order. */
    const perEndpoint: AttemptResult[][] = [];
    const { tracing } = this.deps;
    const span =
      tracing?.enabled && admitted.length > 0
        ? startBatch(
            tracing,
            items.map((i) => i.job),
            { destinationId: destination.id, batchId },
          )
        : undefined;
    if (admitted.length > 0) {
      const jobs = items.map((i) => i.job);
      const body = renderBatchBody(batchId, jobs);
      const signature = signatureHeaders(destination.signing, batchId, body, now());
      const cap = this.deps.cap(destination.id, config);
      const timeoutMs = config.delivery.timeoutMs;
      const outcomes = await Promise.all(
        admitted.map((a) => {
          const headers = batchRequestHeaders(a.endpoint, batchId, items.length, signature);
          const request: WebhookRequest = { url: a.endpoint.url, headers, body, timeoutMs, readAnswer: true };
          // Sent to one endpoint, the batch body is not read again here: it may move to the webhook thread.
          if (admitted.length === 1) request.bodyHandedOver = true;
          const sent = () => sendRequest(requests, a, { destinationId: destination.id, cap, request, id: batchId });
          return span ? tracedRequest(tracing!, { parent: span, endpointRef: a.endpoint.ref, headers }, sent) : sent();
        }),
      );
      const ids = jobs.map((j) => j.messageId);
      const answeredAt = now();
      for (const o of outcomes) {
        if (isDeferred(o)) deferred.push(o);
        else perEndpoint.push(batchEventResults(o, ids, answeredAt));
      }
    }
    if (span) endDelivery(span, undefined);
    const ref = { batchId, batchSize: items.length };
    const { settler } = this.deps;
    await Promise.all(
      items.map((item, i) => {
        const results = perEndpoint.map((r) => r[i]!);
        const round = { attempt: attemptNumber(item.job), startedAt, results, deferred, batch: ref };
        return settler.settle(item.job, round, item.config).then(item.resolve, item.reject);
      }),
    );
  }
}
