import { formatDuration } from '@sluice/config';
import {
  destinationGoneError,
  orderingReleaseRecord,
  REJECT_HEADERS,
  rejectedRecord,
  RetryHeadersError,
  retryStateFromHeaders,
  type DeadReason,
  type RetryState,
} from '@sluice/envelope';
import { writeRejected, type ConsumedRecord } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import { HOP_ALLOWANCE_MS, REJECT_ORIGIN } from '../constants.ts';
import { deadLetterMessage, scheduledMessage, type RetryRecordParts } from '../domain/records.ts';
import { place } from '../domain/tiers.ts';
import { MissingDueTimeError, UnreadableRetryRecordError, type RetryServiceError } from '../errors.ts';
import type { RetryMetrics } from '../metrics.ts';
import type { RecordSink } from '@sluice/kafka';

export interface RouterDeps {
  sink: RecordSink;
  metrics: RetryMetrics;
  logger: Logger;
  /** Tiers the service consumes (fixed at start: a tier needs its own consumer). */
  tiersMs: number[];
  tierTopic: (tierMs: number) => string;
  topics: () => { redeliver: string; deadLetter: string; rejected: string };
  now: () => number;
  /**
   * A destination as the config in force has it: whether it delivers per user in order
   * (docs/reference/ordering.md), or undefined once it is gone (deleted, removed from the file).
   * Default: every destination exists, none ordered.
   */
  destination?: (destinationId: string) => { ordered: boolean } | undefined;
}

/**
 * The I/O half of scheduling: puts a record where the pure decisions say (a tier, the redeliver
 * topic, the dead-letter topic, the rejected topic) and resolves only once Kafka acknowledged it.
 */
export class Router {
  private readonly deps: RouterDeps;
  constructor(deps: RouterDeps) {
    this.deps = deps;
  }

  /** Forwards when due, else places the record on the tier that fits its remaining wait. */
  async route(record: RetryRecordParts, state: RetryState, dueAt: number, fromTierMs?: number): Promise<void> {
    const { deps } = this;
    const now = deps.now();
    const placement = place(deps.tiersMs, dueAt, now, HOP_ALLOWANCE_MS);
    if (placement.kind === 'forward') return this.#forward(record, state, dueAt);
    await deps.sink.send(deps.tierTopic(placement.tierMs), scheduledMessage(record, state, dueAt, now));
    const to = formatDuration(placement.tierMs);
    if (fromTierMs === undefined) deps.metrics.scheduled.inc({ tier: to });
    else deps.metrics.retiered.inc({ from: formatDuration(fromTierMs), to });
  }

  /** Puts a record back on the tier it came from, unchanged (used to hand back held records). */
  async requeue(tierMs: number, record: ConsumedRecord, state: RetryState, dueAt: number): Promise<void> {
    await this.deps.sink.send(this.deps.tierTopic(tierMs), scheduledMessage(record, state, dueAt, record.timestamp));
  }

  async #forward(record: RetryRecordParts, state: RetryState, dueAt: number): Promise<void> {
    const { deps } = this;
    await deps.sink.send(deps.topics().redeliver, scheduledMessage(record, state, dueAt));
    const ackedAt = deps.now();
    deps.metrics.forwarded.inc();
    if (ackedAt < dueAt) deps.metrics.early.inc();
    deps.metrics.lateness.observe(Math.max(0, ackedAt - dueAt) / 1000);
  }

  /**
   * Dead-letters an event no attempt may start for. Its destination gone meanwhile, it is
   * dead-lettered `destination_deleted` as the deliverer's intake would (replayable once the id
   * exists again), and its user's queue is released: the deliverer may hold one behind it, whatever
   * the destination's ordering was, and its waiting events are then dead-lettered too.
   */
  async deadLetter(record: RetryRecordParts, state: RetryState, reason: DeadReason): Promise<void> {
    const { deps } = this;
    const destination = deps.destination ? deps.destination(state.destinationId) : { ordered: false };
    const gone = destination === undefined;
    const dead = gone ? { ...state, lastError: destinationGoneError(state.destinationId) } : state;
    const why: DeadReason = gone ? 'destination_deleted' : reason;
    await deps.sink.send(deps.topics().deadLetter, deadLetterMessage(record, dead, why, deps.now()));
    // The deliverer owning the user's queue reads the marker in the user's partition of the redeliver
    // topic and releases the queue if this event is its head. Written after the dead letter, before
    // the retry record's offset is committed: a crash in between writes both again.
    if (gone || destination.ordered) {
      const release = orderingReleaseRecord(record.key?.toString() ?? null, {
        destinationId: state.destinationId,
        messageId: state.messageId,
      });
      await deps.sink.send(deps.topics().redeliver, release);
    }
    deps.metrics.deadLetters.inc({ reason: why });
    deps.logger.info(
      { messageId: state.messageId, destinationId: state.destinationId, attempts: state.attempts, reason: why },
      'dead-lettered',
    );
  }

  /**
   * An unreadable record goes to `sluice.rejected` with the reason; it never stops the consumer, not
   * even when Kafka refuses the rejected record whole (`writeRejected`: written without its value).
   */
  async reject(record: ConsumedRecord, error: RetryServiceError): Promise<void> {
    const { deps } = this;
    const message = rejectedRecord({
      code: error.code,
      message: error.message,
      origin: REJECT_ORIGIN,
      value: record.value,
      key: record.key?.toString() ?? null,
      from: `${record.topic}/${record.partition}/${record.offset}`,
    });
    await writeRejected({
      sink: deps.sink,
      topic: deps.topics().rejected,
      message,
      valueDroppedHeader: REJECT_HEADERS.valueDropped,
      logger: deps.logger,
    });
    deps.metrics.rejected.inc({ code: error.code });
    deps.logger.warn(
      { code: error.code, from: message.headers['sluice-reject-from'] },
      'unreadable retry record rejected',
    );
  }
}

/** Reads the retry state of a record, or says why it cannot be read. */
export function readState(
  record: ConsumedRecord,
): { ok: true; state: RetryState } | { ok: false; error: RetryServiceError } {
  try {
    return { ok: true, state: retryStateFromHeaders(record.headers) };
  } catch (err) {
    // Any failure to read headers is the record's fault, never a reason to stop the consumer.
    const message =
      err instanceof RetryHeadersError ? err.message : `unreadable retry state: ${(err as Error).message}`;
    return { ok: false, error: new UnreadableRetryRecordError(message, { cause: err }) };
  }
}

/** Reads a tier record: its state and the due time this service wrote. */
export function readScheduled(
  record: ConsumedRecord,
): { ok: true; state: RetryState; dueAt: number } | { ok: false; error: RetryServiceError } {
  const read = readState(record);
  if (!read.ok) return read;
  if (read.state.dueAt === undefined) return { ok: false, error: new MissingDueTimeError(record.topic) };
  return { ok: true, state: read.state, dueAt: read.state.dueAt };
}
