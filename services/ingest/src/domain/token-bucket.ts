/** Outcome of asking a bucket for tokens. */
export type TakeResult = { ok: true } | { ok: false; retryAfterSeconds: number };

/**
 * A token bucket (per-source rate limit, docs/reference/tracking-api.md, security.md), pure: the clock is passed in.
 * Holds up to `burst` tokens, refilled at `perSecond`.
 */
export class TokenBucket {
  #tokens: number;
  #updatedAt: number;

  readonly perSecond: number;
  readonly burst: number;
  constructor(perSecond: number, burst: number, nowMs: number) {
    this.perSecond = perSecond;
    this.burst = burst;
    this.#tokens = burst;
    this.#updatedAt = nowMs;
  }

  /** Takes `cost` tokens (capped at `burst`, so a large batch is not refused forever). */
  take(cost: number, nowMs: number): TakeResult {
    const need = Math.min(cost, this.burst);
    this.#tokens = Math.min(this.burst, this.#tokens + ((nowMs - this.#updatedAt) / 1000) * this.perSecond);
    this.#updatedAt = nowMs;
    if (this.#tokens >= need) {
      this.#tokens -= need;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((need - this.#tokens) / this.perSecond)) };
  }
}

/** One bucket per source, rebuilt when the source's limit changes in the config. */
export class RateLimiter {
  readonly #buckets = new Map<string, TokenBucket>();

  take(
    sourceId: string,
    limit: { perSecond: number; burst?: number } | undefined,
    cost: number,
    nowMs: number,
  ): TakeResult {
    if (!limit) return { ok: true };
    const burst = limit.burst ?? Math.max(1, Math.ceil(limit.perSecond));
    let bucket = this.#buckets.get(sourceId);
    if (!bucket || bucket.perSecond !== limit.perSecond || bucket.burst !== burst) {
      bucket = new TokenBucket(limit.perSecond, burst, nowMs);
      this.#buckets.set(sourceId, bucket);
    }
    return bucket.take(cost, nowMs);
  }
}
