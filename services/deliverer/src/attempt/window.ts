import type { DeliveryJob } from '../intake/delivery-job.ts';

/**
 * The span in which attempts of one event may start (docs/reference/retries.md): `lengthMs`
 * (`retry.window`, or the window a replay carries) from `opensAt`, plus `graceMs` of tolerance.
 */
export interface AttemptWindow {
  /** Epoch ms. */
  opensAt: number;
  lengthMs: number;
  graceMs: number;
}

export type WindowVerdict = { open: true } | { open: false; closedAt: number; message: string };

/**
 * How far past its window's end a retry may still start. The retry service schedules the last
 * retry at the window's end exactly (the backoff is clipped to it), and forwarding it to the
 * deliverer takes a moment (within 2 s under normal load): without this tolerance the last retry
 * would never be made.
 */
export const LAST_RETRY_GRACE_MS = 5_000;

/**
 * The window of a job. A retry (or a replay) carries its own: it opened at the first attempt, or
 * at the replay, and lasts the window the replay set or the configured one. An event not yet
 * attempted counts from the moment Sluice accepted it (`acceptedAt`, see `acceptedAt()`), with
 * no tolerance: an event that waited in `sluice.events` longer than the window is not attempted.
 * Without a usable acceptance time the window is unknown and the event is attempted.
 */
export function attemptWindow(
  job: Pick<DeliveryJob, 'previous'>,
  acceptedAt: number | undefined,
  configuredMs: number,
): AttemptWindow | undefined {
  const { previous } = job;
  if (previous)
    return {
      opensAt: previous.firstAttemptAt,
      lengthMs: previous.windowMs ?? configuredMs,
      graceMs: LAST_RETRY_GRACE_MS,
    };
  if (acceptedAt === undefined) return undefined;
  return { opensAt: acceptedAt, lengthMs: configuredMs, graceMs: 0 };
}

/**
 * When Sluice accepted an event: the Kafka timestamp of its record on `sluice.events` (ingest
 * writes the record before it answers 2xx; an upstream producer when it writes it). The
 * envelope's `receivedAt` is only the fallback for a record without a timestamp: an upstream
 * producer may set it to when the event happened elsewhere (a backfill), which says nothing
 * about how long the event has been waiting for Sluice.
 */
export function acceptedAt(recordTimestamp: number, receivedAt: string | undefined): number | undefined {
  if (Number.isFinite(recordTimestamp) && recordTimestamp > 0) return recordTimestamp;
  const parsed = receivedAt === undefined ? NaN : Date.parse(receivedAt);
  return Number.isNaN(parsed) ? undefined : parsed;
}

/** Whether an attempt may start at `now`: not after the window's end plus its tolerance. */
export function checkWindow(window: AttemptWindow, now: number): WindowVerdict {
  const closedAt = window.opensAt + window.lengthMs;
  if (now <= closedAt + window.graceMs) return { open: true };
  return {
    open: false,
    closedAt,
    message: `window of ${window.lengthMs} ms opened at ${iso(window.opensAt)} and closed at ${iso(closedAt)}, ${now - closedAt} ms before this attempt could start`,
  };
}

function iso(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString();
}
