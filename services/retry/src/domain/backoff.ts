import type { RetryState } from '@sluice/envelope';

/** The `retry` section of the config this function needs (durations in ms). */
export interface BackoffSettings {
  /** Retries stop this long after the first attempt (docs/reference/retries.md: 4 h). */
  windowMs: number;
  /** Wait before retry n is `scheduleMs[min(n-1, len-1)]`. */
  scheduleMs: number[];
  /** Relative jitter (0.1 = ±10 %). */
  jitter: number;
}

export type BackoffDecision =
  /** Attempt again at `dueAt` (epoch ms). `clipped` when the window's end moved it earlier. */
  | { kind: 'retry'; dueAt: number; waitMs: number; clipped: boolean; windowEnd: number }
  /** No attempt may start any more: the record goes to the dead-letter topic. */
  | { kind: 'dead'; reason: 'window_exhausted'; windowEnd: number };

export interface BackoffInput {
  state: Pick<RetryState, 'firstAttemptAt' | 'attempts' | 'retryAfterMs' | 'windowMs'>;
  settings: BackoffSettings;
  /** Epoch ms, injected. */
  now: number;
  /** Uniform in [0, 1), injected. */
  random: () => number;
}

/**
 * When the next attempt is due (docs/reference/retries.md). With n = attempts made so far (at least 1):
 * - the wait is `scheduleMs[min(n-1, len-1)]` scaled by a uniform factor in [1 − jitter, 1 + jitter];
 *   a `Retry-After` replaces it, without jitter (jitter would make us call back earlier than asked);
 * - due = now + wait, clipped to the window's end = firstAttemptAt + window (`state.windowMs`, set by
 *   a replay, overrides the configured window): the last attempt lands at the window's end;
 * - when now is already at or past the window's end, no attempt may start: dead letter.
 */
export function nextAttempt({ state, settings, now, random }: BackoffInput): BackoffDecision {
  const windowEnd = state.firstAttemptAt + (state.windowMs ?? settings.windowMs);
  if (now >= windowEnd) return { kind: 'dead', reason: 'window_exhausted', windowEnd };
  const n = Math.max(1, state.attempts);
  const { scheduleMs } = settings;
  const scheduled = scheduleMs[Math.min(n - 1, scheduleMs.length - 1)] ?? 0;
  const waitMs =
    state.retryAfterMs !== undefined && state.retryAfterMs >= 0
      ? state.retryAfterMs
      : Math.round(scheduled * (1 + settings.jitter * (2 * random() - 1)));
  const due = now + Math.max(0, waitMs);
  const clipped = due > windowEnd;
  const dueAt = clipped ? windowEnd : due;
  return { kind: 'retry', dueAt, waitMs: dueAt - now, clipped, windowEnd };
}
