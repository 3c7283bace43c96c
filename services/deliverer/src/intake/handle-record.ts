import type { Destination, SluiceConfig } from '@sluice/config';
import type { EnvelopeCodec } from '@sluice/codec';
import {
  readOrderingRelease,
  REJECT_HEADERS,
  rejectedRecord,
  retryStateFromHeaders,
  RetryHeadersError,
  type EventEnvelope,
  type RetryState,
} from '@sluice/envelope';
import { writeRejected, type ConsumedRecord, type RecordSink, type RecordSlot } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import { isWaitingTopic } from '@sluice/topology';
import { traceHeadersOf, type TraceHeaders } from '@sluice/tracing';
import { encodeBody, renderBody, routeEvent } from '@sluice/webhook';
import { REJECT_ORIGIN } from '../service/constants.ts';
import type { Delivery } from '../attempt/delivery.ts';
import { type FilterDeps, filterRouted } from './filter-routed.ts';
import type { DeliveryJob } from './delivery-job.ts';
import { classifyFailure, type RecordStep, type RejectReason } from './poison.ts';
import { acceptedAt } from '../attempt/window.ts';
import { createAttemptStep } from '../attempt/attempt-step.ts';
import { isInfrastructureFailure } from './infrastructure-errors.ts';
import type { DelivererMetrics } from '../service/metrics.ts';
import type { Ordering } from '../ordering/ordering.ts';
import type { Parking } from '../parking/parking.ts';
import { intakeContext, liveDestinationOrDeadLetter } from './live-destination.ts';
import type { Turn } from './turn.ts';

export interface RecordHandlerDeps {
  config: () => SluiceConfig;
  /** The topics of new events and of due retries; the others it reads are waiting topics (`kafka.topics.waitingPrefix`). */
  topics: { events: string; redeliver: string };
  codec: EnvelopeCodec;
  delivery: Delivery;
  sink: RecordSink;
  metrics: DelivererMetrics;
  logger: Logger;
  /** Pausing (docs/deliverer.md "Pausing"); without it every destination is active. */
  parking?: Parking;
  /** Injected in tests (the window check); default `Date.now`. */
  now?: () => number;
  /** Told of each filter verdict (operator events). */
  watch?: FilterDeps['watch'];
  /** Per-user order (docs/reference/ordering.md); without it no destination is ordered. */
  ordering?: Ordering;
}

/**
 * Delivers a turn's job to its destination: attempted, parked, or dead-lettered when its window is
 * closed; for an ordered destination in its user's turn.
 */
export type DeliverStep = (turn: Turn) => Promise<void>;

/**
 * The step both the live records and the parked ones go through. No attempt starts once the
 * event's window is closed (`attempt/window.ts`): the job is dead-lettered as `window_exhausted`.
 * A stopped destination's job is parked; so is a live job while its destination's parked topic
 * drains (a parked job is then attempted: it is the drain). Endpoints paused on their own are
 * left out of the attempt (`Parking.activeEndpoints`). A destination with per-user order runs it
 * through `Ordering.step`, and so does a retry (see there).
 */
export function createDeliverStep(
  deps: Pick<RecordHandlerDeps, 'config' | 'delivery' | 'parking' | 'now' | 'ordering'>,
): DeliverStep {
  const attempt = createAttemptStep(deps);
  return async (turn) => {
    const { partition } = turn;
    // A retry of a destination no longer ordered goes through it too: it may be the head of a queue
    // left from while it was (`Ordering.step` releases it).
    const ordered = turn.destination.ordering !== undefined || turn.job.previous !== undefined;
    if (deps.ordering && ordered && partition !== undefined) return deps.ordering.step({ ...turn, partition }, attempt);
    await attempt(turn);
  };
}

/** Where the handling of one record got to, and what it learnt: names the reason if it fails. */
interface Progress {
  step: RecordStep;
  sourceId?: string;
}

/**
 * The deliverer's record handler: a new event from `sluice.events` (decode, route, filter, render once,
 * deliver to every routed destination) or a due retry from `sluice.redeliver` (the same bytes,
 * to the endpoints the retry names). Bad input goes to `sluice.rejected`, and so does a record
 * any step of which throws (decode, route, render, encode, sign, send): one record never stops its
 * partition. Only infrastructure failures (`isInfrastructureFailure`) are thrown on, and end the
 * consumer. No attempt starts once the event's window is closed (`attempt/window.ts`): the job is
 * dead-lettered as `window_exhausted`.
 */
export function createRecordHandler(
  deps: RecordHandlerDeps,
): (record: ConsumedRecord, slot?: RecordSlot) => Promise<void> {
  const now = deps.now ?? Date.now;
  const live = intakeContext(deps);
  const filterDeps: FilterDeps = {
    config: deps.config,
    sink: deps.sink,
    metrics: deps.metrics,
    now,
    ...(deps.watch && { watch: deps.watch }),
  };
  const reject = rejecter(deps);
  const deliver = createDeliverStep(deps);

  const onEvent = async (record: ConsumedRecord, progress: Progress, slot: RecordSlot | undefined) => {
    const decoded = await deps.codec.decode(record.value);
    if (!decoded.ok) return reject(record, { code: decoded.code, message: decoded.message });
    const event = decoded.envelope;
    progress.sourceId = event.sourceId;
    progress.step = 'route';
    const key = record.key?.toString() ?? null;
    const { accepted: destinations, written } = filterRouted(
      filterDeps,
      { event, key },
      routeEvent(event, deps.config().destinations),
    );
    if (written) await written;
    if (destinations.length === 0) return;
    progress.step = 'render';
    const rendered = renderBody(event);
    if (!rendered.ok)
      return reject(record, { code: rendered.code, message: rendered.message, sourceId: event.sourceId });
    const trace = traceHeadersOf(record.headers);
    const fresh: FreshEvent = { event, key, body: encodeBody(rendered.body), ...(trace && { trace }) };
    progress.step = 'deliver';
    const turn = {
      acceptedAt: acceptedAt(record.timestamp, event.receivedAt),
      source: 'live',
      partition: record.partition,
    } as const;
    if (destinations.length === 1) {
      const destination = destinations[0]!;
      return deliver({ ...turn, job: newEventJob(fresh, destination), destination, ...(slot && { slot }) });
    }
    // Every destination finishes before a failure of one is reported: the record is done only then.
    const shares = splitSlot(slot, destinations.length);
    const settled = await Promise.allSettled(
      destinations.map((destination, i) =>
        deliver({ ...turn, job: newEventJob(fresh, destination), destination, slot: shares[i]! }).finally(() =>
          shares[i]!.release(),
        ),
      ),
    );
    for (const s of settled) if (s.status === 'rejected') throw s.reason;
  };

  const onRedeliver = async (record: ConsumedRecord, progress: Progress, slot: RecordSlot | undefined) => {
    // A release marker of the retry service (docs/reference/ordering.md); without per-user order here, nothing to release.
    const release = readOrderingRelease(record.headers);
    if (release) return deps.ordering?.release(release, record.key?.toString() ?? null, record.partition);
    let state: RetryState;
    try {
      state = retryStateFromHeaders(record.headers);
    } catch (err) {
      if (err instanceof RetryHeadersError) return reject(record, { code: err.code, message: err.message });
      throw err;
    }
    progress.sourceId = state.sourceId;
    if (!record.value || record.value.length === 0)
      return reject(record, { code: 'empty', message: 'retry record has no body', sourceId: state.sourceId });
    progress.step = 'route';
    const trace = traceHeadersOf(record.headers);
    const job: DeliveryJob = {
      ...(trace && { trace }),
      key: record.key?.toString() ?? `${state.sourceId}:`,
      body: record.value,
      messageId: state.messageId,
      sourceId: state.sourceId,
      destinationId: state.destinationId,
      eventType: state.eventType,
      endpoints: state.endpoints,
      previous: state,
    };
    const destination = await liveDestinationOrDeadLetter(live, job);
    // Dead-lettered here, it leaves its user's queue as any dead letter does (per-user order).
    if (!destination) return deps.ordering?.deadLetteredAtIntake(job, record.partition);
    progress.step = 'deliver';
    await deliver({
      job,
      destination,
      acceptedAt: undefined,
      source: 'retry',
      partition: record.partition,
      ...(slot && { slot }),
    });
  };

  const attempt = createAttemptStep(deps);
  const onWaiting = async (record: ConsumedRecord, progress: Progress, slot: RecordSlot | undefined) => {
    progress.step = 'deliver';
    if ((await deps.ordering!.onWaiting(record, attempt, slot)) === 'rejected')
      return reject(record, {
        code: 'invalid_parked_headers',
        message: 'waiting record without a readable sluice-parked header or key',
      });
  };

  return async (record, slot) => {
    const progress: Progress = { step: 'decode' };
    try {
      if (record.topic === deps.topics.redeliver) return await onRedeliver(record, progress, slot);
      if (record.topic === deps.topics.events) return await onEvent(record, progress, slot);
      if (deps.ordering && isWaitingTopic(deps.config(), record.topic)) return await onWaiting(record, progress, slot);
    } catch (err) {
      const verdict = classifyFailure(err, progress.step, isInfrastructureFailure);
      if (verdict.kind === 'fatal') throw err;
      return reject(record, { code: verdict.reason, message: verdict.message, sourceId: progress.sourceId });
    }
    deps.logger.warn({ topic: record.topic }, 'record from an unexpected topic ignored');
  };
}

/**
 * The slot of a record delivered to `n` destinations, in shares: the record's slot is given back
 * once each delivery has given its share back (it waits in memory) or ended.
 */
function splitSlot(slot: RecordSlot | undefined, n: number): RecordSlot[] {
  let left = n;
  return Array.from({ length: n }, () => {
    let given = false;
    return {
      release: () => {
        if (given) return;
        given = true;
        if (--left === 0) slot?.release();
      },
    };
  });
}

/** A new event decoded and rendered once, for each destination it is routed to. */
interface FreshEvent {
  event: EventEnvelope;
  key: string | null;
  body: Buffer;
  trace?: TraceHeaders;
}

function newEventJob(fresh: FreshEvent, destination: Destination): DeliveryJob {
  const { event, key, body, trace } = fresh;
  const job: DeliveryJob = {
    key,
    body,
    messageId: event.messageId,
    sourceId: event.sourceId,
    destinationId: destination.id,
    eventType: event.type,
    endpoints: destination.endpoints.map((e) => e.ref),
  };
  if (event.receivedAt !== undefined) job.receivedAt = event.receivedAt;
  if (trace !== undefined) job.trace = trace;
  return job;
}

/** Why a record is rejected, and the source it came from when that was read. */
export interface Rejection {
  code: RejectReason;
  message: string;
  sourceId?: string | undefined;
}

/**
 * Sends a record the deliverer cannot handle to `sluice.rejected`, with its reason; without its
 * value if Kafka refuses it whole (`writeRejected`), so a rejection never stops the partition.
 */
export function rejecter(
  deps: Pick<RecordHandlerDeps, 'config' | 'sink' | 'metrics' | 'logger'>,
): (record: ConsumedRecord, why: Rejection) => Promise<void> {
  return async (record, { code, message, sourceId }) => {
    deps.metrics.rejected.inc({ topic: record.topic, code });
    deps.logger.warn(
      { topic: record.topic, partition: record.partition, offset: record.offset, code, message },
      'record rejected',
    );
    const rejected = rejectedRecord({
      code,
      message,
      origin: REJECT_ORIGIN,
      value: record.value,
      key: record.key?.toString() ?? null,
      from: `${record.topic}/${record.partition}/${record.offset}`,
      ...(sourceId !== undefined && { sourceId }),
    });
    await writeRejected({
      sink: deps.sink,
      topic: deps.config().kafka.topics.rejected,
      message: rejected,
      valueDroppedHeader: REJECT_HEADERS.valueDropped,
      logger: deps.logger,
    });
  };
}
