import type { DeferReason } from './endpoint-gate.ts';

/** One endpoint held back for an event, and the earliest time it may get a request. */
export interface Deferred {
  endpoint: string;
  reason: DeferReason;
  until: number;
}

export interface DeferralInput {
  deferred: readonly Deferred[];
  now: number;
  /** Attempts made plus deferrals so far: which step of the backoff schedule applies. */
  steps: number;
  /** `retry.schedule` and `retry.jitter`. */
  scheduleMs: readonly number[];
  jitter: number;
  /** Uniform in [0, 1), injected. */
  random: () => number;
}

/**
 * How long a destination's part of an event waits when every endpoint it names is held back
 * (it travels as the retry state's `retryAfterMs`, which the retry service applies exactly and
 * clips to the window). The earliest endpoint decides. A `Retry-After` hold or a rate-limit turn
 * is an exact time: never earlier. An open breaker or a stalled destination wait at least the
 * backoff step the event has reached (with the schedule's jitter), so an event held back again
 * and again comes round no more often than a retried one: a dead endpoint costs a bounded number
 * of Kafka round trips per event over its window, like plain retries.
 */
export function deferralWaitMs(input: DeferralInput): number {
  const { scheduleMs } = input;
  const step = scheduleMs[Math.min(Math.max(0, input.steps), scheduleMs.length - 1)] ?? 0;
  let wait = Number.POSITIVE_INFINITY;
  for (const d of input.deferred) {
    const exact = Math.max(0, d.until - input.now);
    const w =
      d.reason === 'circuit_open' || d.reason === 'destination_stalled'
        ? Math.max(exact, Math.round(step * (1 + input.jitter * (2 * input.random() - 1))))
        : exact;
    if (w < wait) wait = w;
  }
  return wait === Number.POSITIVE_INFINITY ? 0 : wait;
}
