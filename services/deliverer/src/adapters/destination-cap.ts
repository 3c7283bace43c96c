interface Waiter {
  since: number;
  resolve: (admitted: boolean) => void;
}

/**
 * A destination's cap on requests in flight (`delivery.maxInFlightPerDestination`) that never
 * makes an event sit on its partition slot waiting for a destination that does not move
 * (docs/deliverer.md, "Fault isolation"). When the cap is full an event may wait for a slot only:
 * - while the destination is moving: a request of it finished (answered, failed or timed out)
 *   within the last `stallMs`, or the cap filled up less than `stallMs` ago;
 * - if it is not further back in the queue than the requests that finished in the last `stallMs`
 *   to `2 × stallMs` (the queue it may join is what the destination works off in that time; a
 *   cap that filled up less than `stallMs` ago allows a full cap's worth);
 * - for at most `stallMs`.
 * Otherwise `acquire` answers false and the caller hands the event to the retry path. A healthy
 * busy destination keeps its queue (it works it off in milliseconds); a destination whose
 * requests hang has its further events leave the partition within `stallMs`.
 */
export class DestinationCap {
  #limit: number;
  #stallMs: number;
  readonly #now: () => number;
  #active = 0;
  #waiters: (Waiter | undefined)[] = [];
  #head = 0;
  /** When a request last finished, or the cap last had a free slot: the destination moved. */
  #movedAt: number;
  /** When the cap last went from a free slot to full. */
  #fullSince: number;
  #windowStart: number;
  #finishedThisWindow = 0;
  #finishedLastWindow = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(limit: number, stallMs: number, now: () => number = Date.now) {
    this.#limit = limit;
    this.#stallMs = stallMs;
    this.#now = now;
    this.#movedAt = now();
    this.#fullSince = this.#movedAt;
    this.#windowStart = this.#movedAt;
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
      this.#wake();
    }
  }

  /** True: a slot is taken (release it). False: the destination is stalled; defer the event. */
  acquire(): boolean | Promise<boolean> {
    if (this.#active < this.#limit && this.waiting === 0) {
      this.#active += 1;
      if (this.#active === this.#limit) this.#movedAt = this.#fullSince = this.#now();
      return true;
    }
    const now = this.#now();
    this.#roll(now);
    if (now - this.#movedAt >= this.#stallMs) return false;
    const recent = this.#finishedThisWindow + this.#finishedLastWindow;
    const allowed = now - this.#fullSince < this.#stallMs ? Math.max(this.#limit, recent) : recent;
    if (this.waiting >= allowed) return false;
    return new Promise<boolean>((resolve) => {
      this.#waiters.push({ since: now, resolve });
      if (!this.#timer) this.#arm(this.#stallMs);
    });
  }

  release(): void {
    this.#active -= 1;
    const now = this.#now();
    this.#movedAt = now;
    this.#roll(now);
    this.#finishedThisWindow += 1;
    this.#wake();
  }

  close(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#expire(Number.POSITIVE_INFINITY);
  }

  #roll(now: number): void {
    const age = now - this.#windowStart;
    if (age < this.#stallMs) return;
    this.#finishedLastWindow = age < 2 * this.#stallMs ? this.#finishedThisWindow : 0;
    this.#finishedThisWindow = 0;
    this.#windowStart = now;
  }

  #wake(): void {
    while (this.#active < this.#limit && this.#head < this.#waiters.length) {
      const waiter = this.#waiters[this.#head]!;
      this.#waiters[this.#head] = undefined;
      this.#head += 1;
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
