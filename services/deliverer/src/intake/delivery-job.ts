import type { AttemptRecord, RetryState } from '@sluice/envelope';
import type { TraceHeaders } from '@sluice/tracing';

/**
 * One event to deliver to one destination: a fresh event from `sluice.events`, or a due retry
 * from `sluice.redeliver`. `body` is the exact bytes to send (and sign) on this attempt.
 */
export interface DeliveryJob {
  /** Kafka key of the event, carried onto retry, dead-letter and attempt records. */
  key: string | null;
  body: Buffer;
  messageId: string;
  sourceId: string;
  destinationId: string;
  eventType: string;
  receivedAt?: string;
  /** Endpoint URLs to try: all of the destination's, or those a retry names. */
  endpoints: string[];
  /** The state of an earlier attempt, when this is a redelivery. */
  previous?: RetryState;
  /** The trace context of the record it came from; the records it leads to carry it on. */
  trace?: TraceHeaders;
}

/** 1-based number of the attempt this job makes. */
export function attemptNumber(job: DeliveryJob): number {
  return (job.previous?.attempts ?? 0) + 1;
}

/** What an attempt round leaves in the retry state, as `stateAfterAttempt` is told. */
export interface AttemptSummary {
  /** The round's attempt records, appended to the history; none when no request was made. */
  records?: readonly AttemptRecord[];
  /** The endpoints the state names (those a retry tries, or a dead letter's replay). */
  endpoints: string[];
  lastError?: string;
  retryAfterMs?: number;
}

/**
 * The retry state after this attempt, for `sluice.retry` or `sluice.dead-letter`: the first
 * attempt time and any replay window are kept from the previous state, the history is appended.
 */
export function stateAfterAttempt(job: DeliveryJob, attemptStartedAt: number, summary: AttemptSummary): RetryState {
  const previous = job.previous;
  const state: RetryState = {
    messageId: job.messageId,
    sourceId: job.sourceId,
    destinationId: job.destinationId,
    eventType: job.eventType,
    endpoints: summary.endpoints,
    firstAttemptAt: previous?.firstAttemptAt ?? attemptStartedAt,
    attempts: attemptNumber(job),
    history: [...(previous?.history ?? []), ...(summary.records ?? [])],
  };
  if (summary.lastError !== undefined) state.lastError = summary.lastError;
  if (summary.retryAfterMs !== undefined) state.retryAfterMs = summary.retryAfterMs;
  const receivedAt = job.receivedAt ?? previous?.receivedAt;
  if (receivedAt !== undefined) state.receivedAt = receivedAt;
  if (previous?.windowMs !== undefined) state.windowMs = previous.windowMs;
  if (previous?.deferrals !== undefined) state.deferrals = previous.deferrals;
  return state;
}
