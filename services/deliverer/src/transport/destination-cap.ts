import { WaiterQueue } from '@sluice/service-kit';

type Waiter = (admitted: boolean) => void;

/**
 * Requests a destination may have in flight while none of its requests has finished lately: a
 * destination that answers nothing holds no more partition slots than this until its requests time
 * out (and its endpoints' breakers open).
 */
export const UNPROVEN_IN_FLIGHT = 16;

/** A destination whose requests take this many times the fastest destination's has its queue bounded. */
export const SLOW_FACTOR = 4;

/** The process's requests that finished (not timed out): the yardstick a destination is judged stalled by. */
export interface Progress {
  /** When the last one finished. */
  finishedAt: number;
  /** How many have finished. */
  finished: number;
}

/** Requests other destinations must finish after this one's last before it can be judged stalled. */
export const STALL_EVIDENCE = 16;

/**
 * A destination is given this many times its usual answer time (the moving average of its answered
 * requests), and never less than `stallMs`, before it counts as not moving or stalled: an endpoint
 * known to answer in 400 ms is not stalled by a 250 ms `stallAfter`, one that never answered is.
 */
export const PATIENCE_FACTOR = 2;

/** What every destination's cap shares with the others. */
export interface CapContext {
  /** The process's progress, one object for all of its destinations' caps. */
  progress: Progress;
  /** The clock (ms); `Date.now` unless a test injects one. */
  now?: () => number;
}

/** Whether some partition has half its slots or more taken, as `judge` is told. */
export type PartitionLoad = 'crowded' | 'calm';

/** How a request ended, as `release` is told: `timed-out` when it hit its deadline. */
export type RequestEnd = 'finished' | 'timed-out';

/**
 * A destination's cap on requests in flight (`delivery.maxInFlightPerDestination`) that never lets
 * an event sit on its partition slot waiting for a destination that does not move
 * (docs/deliverer.md, "Fault isolation").
 * - *Patience*: `stallMs`, or `PATIENCE_FACTOR` times the destination's usual answer time if that
 *   is longer (an endpoint known to be slow is not mistaken for one that does not answer).
 * - *Moving*: one of its requests finished (answered or failed, not timed out) within its patience.
 *   A moving destination may have the whole cap in flight; one that is not may have
 *   `UNPROVEN_IN_FLIGHT` (an idle destination proves itself with its first answers, in ms).
 * - *Stalled*: some partition has half its slots or more taken (events waiting are about to hold
 *   others back), it has
 *   requests in flight, none of them finished for its patience since it last moved
 *   (or got busy), and requests of other destinations did finish (not timing out) since then, at
 *   least `STALL_EVIDENCE` of them. The evidence keeps a process slow as a whole (CPU starved, a
 *   long GC) from stalling anybody; the time is the wall clock's, because the others may have
 *   stopped finishing precisely because their partition slots are held by events waiting for this
 *   destination. Once stalled it stays so until one of its requests finishes or none is in flight.
 * Past its allowance an event waits for a slot only while the destination is not stalled, and — if
 * the destination is slow, its requests taking `SLOW_FACTOR` times as long as the fastest
 * destination's — only if its expected wait (its place in the queue × the destination's average
 * request time ÷ the cap) is within `stallMs`. Otherwise, and for every waiter once the
 * destination is stalled, `acquire` answers false and the caller hands the event to the retry
 * path. Stalled and slow are judged by `judge`, between event-loop turns. A healthy busy
 * destination keeps its queue (it works it off in milliseconds); one whose requests hang has its
 * further events leave the partition as soon as they would hold back others, at the earliest its
 * patience after it last moved.
 */
export class DestinationCap {
  #limit: number;
  #stallMs: number;
  readonly #now: () => number;
  #active = 0;
  readonly #waiters = new WaiterQueue<Waiter>();
  /** When a request last finished other than by timing out. */
  #finishedAt = Number.NEGATIVE_INFINITY;
  /** When the destination last went from no request in flight to one. */
  #busySince = 0;
  /** `progress.finished` when this destination last moved (a request finished, or it got busy). */
  #finishedMark = 0;
  /** Moving average of how long its requests took (ms); undefined until one finished. */
  #latencyMs: number | undefined;
  /** The same over its requests that finished other than by timing out: its usual answer time. */
  #answerMs: number | undefined;
  /** Set by `judge` (between event-loop turns), cleared when one of its requests finishes. */
  #stalled = false;
  #slow = false;
  readonly #progress: Progress;

  constructor(limit: number, stallMs: number, context: CapContext) {
    this.#limit = limit;
    this.#stallMs = stallMs;
    this.#progress = context.progress;
    this.#now = context.now ?? Date.now;
  }

  /** As judged last: requests in flight, and the others kept finishing for its patience after this one last moved. */
  get stalled(): boolean {
    return this.#stalled;
  }

  /** As judged last: its requests take `SLOW_FACTOR` times the fastest destination's (its queue is bounded). */
  get slow(): boolean {
    return this.#slow;
  }

  /** Its moving average of request time (ms); undefined until a request finished. */
  get latencyMs(): number | undefined {
    return this.#latencyMs;
  }

  /** One of its requests finished (not timed out) within its patience. */
  moving(now: number): boolean {
    return now - this.#finishedAt < this.#patienceMs();
  }

  /** How long it may go without a request finishing before it counts as not moving (or stalled). */
  #patienceMs(): number {
    const usual = this.#answerMs;
    return usual === undefined ? this.#stallMs : Math.max(this.#stallMs, PATIENCE_FACTOR * usual);
  }

  /**
   * Judges the destination against the rest of the process; called from a timer, so between
   * event-loop turns, when the results of a batch have all been counted (judged in the middle of
   * one, a destination whose results come later in it would look behind). `fastestMs` is the
   * lowest average request time of the process's moving destinations: a destination 4× slower
   * than that has its queue bounded. `crowded` (the default): some partition has half its slots or
   * more taken, so events waiting are about to hold others back; a destination becomes stalled
   * only then (until then its waiters cost nobody anything), and stays stalled until one of its
   * requests finishes or none is in flight. A stalled destination's waiters give up.
   */
  judge(fastestMs: number | undefined, load: PartitionLoad = 'crowded'): void {
    // Wall time since it last moved, provided the rest of the process has moved since (the
    // evidence): the others may well have stopped since, their partition slots taken by events
    // waiting for this destination, so how long ago they last finished is no measure.
    const behind = this.#now() - Math.max(this.#finishedAt, this.#busySince);
    const evidence = this.#progress.finished - this.#finishedMark;
    const stuck = this.#active > 0 && behind >= this.#patienceMs() && evidence >= STALL_EVIDENCE;
    this.#stalled = stuck && (this.#stalled || load === 'crowded');
    const latency = this.#latencyMs;
    this.#slow = latency !== undefined && fastestMs !== undefined && latency > SLOW_FACTOR * fastestMs;
    if (this.#stalled) this.#expire();
  }

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#waiters.size;
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
      if (this.#active === 0) this.#becameBusy(now);
      this.#active += 1;
      return true;
    }
    if (this.#stalled) return false;
    // The queue's bound protects the others from a destination slower than them (never applies to
    // a deliverer's only destination, nor when all are slow alike: an overloaded process).
    if (this.#slow && (this.waiting + 1) * this.#latencyMs! > this.#stallMs * this.#limit) return false;
    return new Promise<boolean>((resolve) => this.#waiters.push(resolve));
  }

  /**
   * A request finished after `latencyMs`. One that hit its deadline (`timed-out`) frees its slot
   * but proves nothing: it neither makes its destination moving nor counts as the process's progress.
   */
  release(latencyMs: number, end: RequestEnd = 'finished'): void {
    this.#active -= 1;
    const now = this.#now();
    if (end !== 'timed-out') {
      this.#finishedAt = now;
      this.#stalled = false;
      if (now > this.#progress.finishedAt) this.#progress.finishedAt = now;
      this.#progress.finished += 1;
      this.#finishedMark = this.#progress.finished;
      this.#answerMs = movingAverage(this.#answerMs, latencyMs);
    }
    this.#latencyMs = movingAverage(this.#latencyMs, latencyMs);
    this.#wake(now);
  }

  /** Every waiter gives up (shutdown). */
  close(): void {
    this.#expire();
  }

  #becameBusy(now: number): void {
    this.#busySince = now;
    this.#finishedMark = this.#progress.finished;
  }

  #allowed(now: number): number {
    return this.moving(now) ? this.#limit : Math.min(this.#limit, UNPROVEN_IN_FLIGHT);
  }

  #wake(now: number): void {
    const allowed = this.#allowed(now);
    while (this.#active < allowed && this.#waiters.size > 0) {
      if (this.#active === 0) this.#becameBusy(now);
      this.#active += 1;
      this.#waiters.shift()!(true);
    }
  }

  /** Every waiter gives up (its event is deferred). */
  #expire(): void {
    for (let waiter = this.#waiters.shift(); waiter; waiter = this.#waiters.shift()) waiter(false);
  }
}

/** An exponential moving average giving the newest sample a quarter of the weight. */
function movingAverage(average: number | undefined, sample: number): number {
  return average === undefined ? sample : average + (sample - average) / 4;
}
