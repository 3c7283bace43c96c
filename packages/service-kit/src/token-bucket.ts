/** Outcome of asking a bucket for tokens: taken, or how long until they will be there. */
export type TakeResult = { ok: true } | { ok: false; waitMs: number };

/**
 * A token bucket, pure: the clock is passed in. Holds up to `burst` tokens, refilled at
 * `perSecond`, full when made. A request is charged its whole cost: it is admitted when the bucket
 * is full enough (at least `min(cost, burst)` tokens, so a request larger than the burst is not
 * refused forever), and then takes all `cost` tokens, leaving a debt that must be refilled before
 * the next one is admitted. Over any stretch of time it admits at most `burst + perSecond × seconds`
 * tokens plus the one request that ran into debt. Ingest limits each source's calls with it
 * (docs/ingest.md, "Rate limits"), the deliverer each endpoint's requests (docs/deliverer.md).
 */
export class TokenBucket {
  #perSecond: number;
  #burst: number;
  #tokens: number;
  #refilledAt: number;

  constructor(perSecond: number, burst: number, nowMs: number) {
    this.#perSecond = perSecond;
    this.#burst = burst;
    this.#tokens = burst;
    this.#refilledAt = nowMs;
  }

  get perSecond(): number {
    return this.#perSecond;
  }

  get burst(): number {
    return this.#burst;
  }

  /** A new rate and burst that keep the tokens already there (at most the new burst, from the next refill). */
  setRate(perSecond: number, burst: number): void {
    this.#perSecond = perSecond;
    this.#burst = burst;
  }

  /** Milliseconds until at least `min(cost, burst)` tokens are there: 0 when they are there now. */
  shortfallMs(cost: number, nowMs: number): number {
    this.#tokens = Math.min(
      this.#burst,
      this.#tokens + (Math.max(0, nowMs - this.#refilledAt) * this.#perSecond) / 1_000,
    );
    this.#refilledAt = Math.max(this.#refilledAt, nowMs);
    const need = Math.min(cost, this.#burst);
    return this.#tokens >= need ? 0 : ((need - this.#tokens) * 1_000) / this.#perSecond;
  }

  /** Takes `cost` tokens when at least `min(cost, burst)` are there; the balance may go negative. */
  take(cost: number, nowMs: number): TakeResult {
    const waitMs = this.shortfallMs(cost, nowMs);
    if (waitMs > 0) return { ok: false, waitMs };
    this.#tokens -= cost;
    return { ok: true };
  }

  /** Gives back tokens taken for a request that was not made after all. */
  refund(cost: number): void {
    this.#tokens += cost;
  }
}
