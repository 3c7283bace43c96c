/** Outcome of asking a bucket for tokens. */
export type TakeResult = { ok: true } | { ok: false; retryAfterSeconds: number };

/**
 * A token bucket (per-source rate limit, docs/ingest.md "Rate limits"), pure: the clock is passed
 * in. Holds up to `burst` tokens, refilled at `perSecond`. A request is charged its whole cost:
 * it is admitted when the bucket is full enough (at least `min(cost, burst)` tokens, so a batch
 * larger than the burst is not refused forever), and then takes all `cost` tokens, leaving a debt
 * that must be refilled before the next request is admitted. Over any stretch of time a source
 * gets at most `burst + perSecond × seconds` calls plus the one request that ran into debt.
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

  /** Takes `cost` tokens when at least `min(cost, burst)` are there; the balance may go negative. */
  take(cost: number, nowMs: number): TakeResult {
    const need = Math.min(cost, this.burst);
    this.#tokens = Math.min(this.burst, this.#tokens + (Math.max(0, nowMs - this.#updatedAt) / 1000) * this.perSecond);
    this.#updatedAt = nowMs;
    if (this.#tokens >= need) {
      this.#tokens -= cost;
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
