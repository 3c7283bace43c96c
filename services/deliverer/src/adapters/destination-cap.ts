interface Waiter {
  since: number;
  resolve: (admitted: boolean) => void;
}

/**
 * Requests a destination may have in flight while none of its requests has finished lately: a
 * destination that answers nothing holds no more partition slots than this until its requests time
 * out (and its endpoints' breakers open).
 */
export const UNPROVEN_IN_FLIGHT = 16;

/**
 * A destination's cap on requests in flight (`delivery.maxInFlightPerDestination`) that never lets
 * an event sit on its partition slot waiting for a destination that does not move
 * (docs/deliverer.md, "Fault isolation"). A destination is *moving* when one of its requests
 * finished (answered, failed or timed out) within the last `stallMs`; it is *stalled* when it has
 * requests in flight and none finished for `stallMs`.
 * - A moving destination may have the whole cap in flight; one that is not may have
 *   `UNPROVEN_IN_FLIGHT` (an idle destination proves itself with its first answers, in ms).
 * - Past that an event waits for a slot only while the destination is not stalled, only if it is
 *   no further back in the queue than what the destination finished in the last `stallMs` to
 *   `2 × stallMs` (a full cap's worth while the destination has been busy for less than
 *   `stallMs`), and for at most `stallMs`.
 * Otherwise `acquire` answers false and the caller hands the event to the retry path. A healthy
 * busy destination keeps its queue (it works it off in milliseconds); one whose requests hang
 * has its further events leave the partition within `stallMs`.
 */
export class DestinationCap {
  #limit: number;
  #stallMs: number;
  readonly #now: () => number;
  #active = 0;
  #waiters: (Waiter | undefined)[] = [];
  #head = 0;
  /** When a request last finished. */
  #finishedAt = Number.NEGATIVE_INFINITY;
  /** When the destination last went from no request in flight to one. */
  #busySince = 0;
  #windowStart: number;
  #finishedThisWindow = 0;
  #finishedLastWindow = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(limit: number, stallMs: number, now: () => number = Date.now) {
    this.#limit = limit;
    this.#stallMs = stallMs;
    this.#now = now;
    this.#windowStart = now();
  }

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#waiters.length - this.#head;
  }

  get limit(): number {
    return this.#limit;
  }

  configure(limit: number, stallMs: number): void {
    this.#stallMs = stallMs;
    if (limit !== this.#limit) {
      this.#limit = limit;
      this.#wake(this.#now());
    }
  }

  /** True: a slot is taken (release it). False: the destination is stalled; defer the event. */
  acquire(): boolean | Promise<boolean> {
    const now = this.#now();
    if (this.waiting === 0 && this.#active < this.#allowed(now)) {
      if (this.#active === 0) this.#busySince = now;
      this.#active += 1;
      return true;
    }
    const moved = Math.max(this.#finishedAt, this.#busySince);
    if (now - moved >= this.#stallMs) return false;
    this.#roll(now);
    const recent = this.#finishedThisWindow + this.#finishedLastWindow;
    const queue = now - this.#busySince < this.#stallMs ? Math.max(this.#limit, recent) : recent;
    if (this.waiting >= queue) return false;
    return new Promise<boolean>((resolve) => {
      this.#waiters.push({ since: now, resolve });
      if (!this.#timer) this.#arm(this.#stallMs);
    });
  }

  release(): void {
    this.#active -= 1;
    const now = this.#now();
    this.#finishedAt = now;
    this.#roll(now);
    this.#finishedThisWindow += 1;
    this.#wake(now);
  }

  /** Every waiter gives up (shutdown). */
  close(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#expire(Number.POSITIVE_INFINITY);
  }

  #allowed(now: number): number {
    return now - this.#finishedAt < this.#stallMs ? this.#limit : Math.min(this.#limit, UNPROVEN_IN_FLIGHT);
  }

  #roll(now: number): void {
    const age = now - this.#windowStart;
    if (age < this.#stallMs) return;
    this.#finishedLastWindow = age < 2 * this.#stallMs ? this.#finishedThisWindow : 0;
    this.#finishedThisWindow = 0;
    this.#windowStart = now;
  }

  #wake(now: number): void {
    const allowed = this.#allowed(now);
    while (this.#active < allowed && this.#head < this.#waiters.length) {
      const waiter = this.#waiters[this.#head]!;
      this.#waiters[this.#head] = undefined;
      this.#head += 1;
      if (this.#active === 0) this.#busySince = now;
      this.#active += 1;
      waiter.resolve(true);
    }
    this.#compact();
  }

  #arm(delayMs: number): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#expire(this.#now() - this.#stallMs);
      const oldest = this.#waiters[this.#head];
      if (oldest) this.#arm(Math.max(1, oldest.since + this.#stallMs - this.#now()));
    }, Math.max(1, Math.ceil(delayMs)));
    this.#timer.unref();
  }

  /** Waiters queued at or before `cutoff` give up (their events are deferred). */
  #expire(cutoff: number): void {
    while (this.#head < this.#waiters.length) {
      const waiter = this.#waiters[this.#head]!;
      if (waiter.since > cutoff) break;
      this.#waiters[this.#head] = undefined;
      this.#head += 1;
      waiter.resolve(false);
    }
    this.#compact();
  }

  #compact(): void {
    if (this.#head === this.#waiters.length) {
      this.#waiters.length = 0;
      this.#head = 0;
    } else if (this.#head >= 1_024 && this.#head * 2 >= this.#waiters.length) {
      this.#waiters = this.#waiters.slice(this.#head);
      this.#head = 0;
    }
  }
}
