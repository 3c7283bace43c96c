import type { AttemptEvent, AttemptRecord } from '@sluice/envelope';
import type { AttemptResult } from '../transport/attempt-result.ts';
import type { Deferred } from './deferral.ts';
import type { DeliveryJob } from '../intake/delivery-job.ts';

/** What an attempt record names its request by: the event, its source and destination. */
export type AttemptSubject = Pick<DeliveryJob, 'messageId' | 'sourceId' | 'destinationId' | 'eventType'>;

/** The `sluice.attempts` record of one request (docs/reference/delivery.md), a destination's webhook or an operator event. */
export function attemptEvent(job: AttemptSubject, attempt: number, r: AttemptResult): AttemptEvent {
  const event = baseEvent(job, attempt, r);
  if (r.status !== undefined) event.status = r.status;
  if (r.error !== undefined) event.error = r.error;
  if (r.responseSnippet !== undefined) event.responseSnippet = r.responseSnippet;
  return event;
}

/** An attempt round as its records name it: its number, and when (ms) it was made. */
export interface AttemptRound {
  attempt: number;
  at: number;
}

/** The `sluice.attempts` record of an endpoint held back: no request, the reason as its outcome. */
export function deferralEvent(job: DeliveryJob, d: Deferred, round: AttemptRound): AttemptEvent {
  return baseEvent(job, round.attempt, { endpoint: d.endpoint, outcome: d.reason, latencyMs: 0, at: round.at });
}

/** What one record says of its endpoint: which, its outcome, the request's time and its start (ms). */
interface EventFields {
  endpoint: string;
  outcome: AttemptEvent['outcome'];
  latencyMs: number;
  at: number;
}

function baseEvent(job: AttemptSubject, attempt: number, fields: EventFields): AttemptEvent {
  const { endpoint, outcome, latencyMs, at } = fields;
  return {
    messageId: job.messageId,
    sourceId: job.sourceId,
    destinationId: job.destinationId,
    eventType: job.eventType,
    endpoint,
    attempt,
    outcome,
    latencyMs,
    at: isoTime(at),
  };
}

/** The last time formatted: the events of a batch share their request's start time (one `toISOString` per batch). */
let lastMs = Number.NaN;
let lastIso = '';
function isoTime(ms: number): string {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}

/** The attempts of one round as the retry state keeps them (its history). */
export function attemptRecords(attempt: number, results: readonly AttemptResult[]): AttemptRecord[] {
  return results.map((r) => ({
    attempt,
    endpoint: r.endpoint,
    at: r.at,
    outcome: r.outcome,
    latencyMs: r.latencyMs,
    ...(r.status !== undefined && { status: r.status }),
    ...(r.error !== undefined && { error: r.error }),
  }));
}
