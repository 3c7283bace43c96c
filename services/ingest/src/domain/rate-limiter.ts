import { TokenBucket } from '@sluice/service-kit';

/** Outcome of asking a source's bucket for a request's calls (docs/ingest.md, "Rate limits"). */
export type TakeResult = { ok: true } | { ok: false; retryAfterSeconds: number };

/** One token bucket per source (calls per second), rebuilt when the source's limit changes in the config. */
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
    const taken = bucket.take(cost, nowMs);
    return taken.ok ? taken : { ok: false, retryAfterSeconds: retryAfterSeconds(taken.waitMs) };
  }
}

/** Whole seconds for `Retry-After`, at least 1. */
function retryAfterSeconds(waitMs: number): number {
  return Math.max(1, Math.ceil(waitMs / 1_000));
}
