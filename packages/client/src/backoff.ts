export interface BackoffSettings {
  /** Delay before the first retry, before jitter. */
  minDelayMs: number;
  /** Upper bound of any delay. */
  maxDelayMs: number;
}

/**
 * Delay before retry number `retry` (0 for the first retry): exponential,
 * `minDelayMs × 2^retry` capped at `maxDelayMs`, with "equal jitter" — a uniformly random
 * point in the upper half of that span, so clients that failed together spread out but
 * never retry sooner than half the nominal delay. `random` returns a number in [0, 1).
 */
export function backoffDelay(retry: number, settings: BackoffSettings, random: () => number = Math.random): number {
  const nominal = Math.min(settings.maxDelayMs, settings.minDelayMs * 2 ** Math.min(retry, 30));
  return Math.round(nominal / 2 + random() * (nominal / 2));
}
