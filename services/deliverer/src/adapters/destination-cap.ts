type Waiter = (admitted: boolean) => void;

/**
 * Requests a destination may have in flight while none of its requests has finished lately: a
 * destination that answers nothing holds no more partition slots than this until its requests time
 * out (and its endpoints' breakers open).
 */
export const UNPROVEN_IN_FLIGHT = 16;

/** When any destination's request last finished: the yardstick a destination is judged stalled by. */
export interface Progress {
  finishedAt: number;
}

/**
 * A destination's cap on requests in flight (`delivery.maxInFlightPerDestination`) that never lets
 * an event sit on its partition slot waiting for a destination that does not move
 * (docs/deliverer.md, "Fault isolation").
 * - *Moving*: one of its requests finished (answered or failed, not timed out) within `stallMs`. A
 *   moving destination may have the whole cap in flight; one that is not may have
 *   `UNPROVEN_IN_FLIGHT` (an idle destination proves itself with its first answers, in ms).
 * - *Stalled*: it has requests in flight, and requests of other destinations kept finishing for
 *   `stallMs` after its own last did (or after it got busy). Judged against the rest of the process,
 *   not the wall clock, so a process that is slow as a whole (CPU starved, a long GC) stalls nobody.
 * Past its allowance an event waits for a slot only while the destination is not stalled, and only
 * if its expected wait is within `stallMs`: its place in the queue × the destination's request
 * latency (a moving average) ÷ the cap. That bound applies only while another destination has
 * moved since this one last did, and not before this one's first request finished. Otherwise, and for every waiter once the destination is stalled, `acquire`
 * answers false and the caller hands the event to the retry path. A healthy busy destination keeps its queue (it works it off in milliseconds); one
 * whose requests hang has its further events leave the partition within about `stallMs`.
 */
export class DestinationCap {
  #limit: number;
  #stallMs: number;
  readonly #now: () => number;
  #active = 0;
  #waiters: (Waiter | undefined)[] = [];
  #head = 0;
  /** When a request last finished other than by timing out. */
  #finishedAt = Number.NEGATIVE_INFINITY;
  /** When the destination last went from no request in flight to one. */
  #busySince = 0;
  /** Moving average of how long its requests took (ms); undefined until one finished. */
  #latencyMs: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  readonly #progress: Progress;

  constructor(limit: number, stallMs: number, progress: Progress, now: () => number = Date.now) {
    this.#limit = limit;
    this.#stallMs = stallMs;
    this.#progress = progress;
    this.#now = now;
  }

  /** Requests in flight, and the others kept finishing for `stallMs` after this one last moved. */
  get stalled(): boolean {
    return this.#active > 0 && this.#progress.finishedAt - Math.max(this.#finishedAt, this.#busySince) >= this.#stallMs;
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
    if (this.stalled) return false;
    // The queue's bound protects the others: it applies only while another destination has moved
    // since this one last did (never to a deliverer's only busy destination).
    const latency = this.#latencyMs;
    if (latency !== undefined && this.#progress.finishedAt > this.#finishedAt && (this.waiting + 1) * latency > this.#stallMs * this.#limit) {
      return false;
    }
    return new Promise<boolean>((resolve) => {
      this.#waiters.push(resolve);
      if (!this.#timer) this.#arm(this.#stallMs / 4);
    });
  }

  /**
   * A request finished after `latencyMs`. One that hit its deadline frees its slot but proves
   * nothing: it neither makes its destination moving nor counts as the process's progress.
   */
  release(latencyMs: number, timedOut = false): void {
    this.#active -= 1;
    const now = this.#now();
    if (!timedOut) {
      this.#finishedAt = now;
      if (now > this.#progress.finishedAt) this.#progress.finishedAt = now;
    }
    const average = this.#latencyMs;
    this.#latencyMs = average === undefined ? latencyMs : average + (latencyMs - average) / 4;
    this.#wake(now);
  }

  /** Every waiter gives up (shutdown). */
  close(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#expire();
  }

  #allowed(now: number): number {
    return now - this.#finishedAt < this.#stallMs ? this.#limit : Math.min(this.#limit, UNPROVEN_IN_FLIGHT);
  }

  #wake(now: number): void {
    const allowed = this.#allowed(now);
    while (this.#active < allowed && this.#head < this.#waiters.length) {
      const waiter = this.#waiters[this.#head]!;
      this.#waiters[this.#head] = undefined;
      this.#head += 1;
      if (this.#active === 0) this.#busySince = now;
      this.#active += 1;
      waiter(true);
    }
    this.#compact();
  }

  /** While events wait: every quarter of the stall time, the waiters give up if the destination stalled. */
  #arm(delayMs: number): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.stalled) this.#expire();
      if (this.waiting > 0) this.#arm(this.#stallMs / 4);
    }, Math.max(1, Math.ceil(delayMs)));
    this.#timer.unref();
  }

  /** Every waiter gives up (its event is deferred). */
  #expire(): void {
    while (this.#head < this.#waiters.length) {
      const waiter = this.#waiters[this.#head]!;
      this.#waiters[this.#head] = undefined;
      this.#head += 1;
      waiter(false);
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
