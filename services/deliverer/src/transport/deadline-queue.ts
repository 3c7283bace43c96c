/**
 * The one deadline of a webhook request (docs/reference/delivery.md: connect + response within `delivery.timeoutMs`),
 * as an abort signal undici accepts (it only needs `aborted`, `reason` and the EventTarget
 * listener methods). Much cheaper than an `AbortController` plus a `setTimeout` per request.
 */
export class Deadline {
  aborted = false;
  reason: Error | undefined;
  /** Set when the request finished; the queue then forgets it. */
  done = false;
  #listeners: (() => void)[] | undefined;

  /** `performance.now()` at which the request is aborted. */
  readonly at: number;
  private readonly makeReason: () => Error;
  constructor(at: number, makeReason: () => Error) {
    this.at = at;
    this.makeReason = makeReason;
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    (this.#listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const list = this.#listeners;
    if (!list) return;
    const i = list.indexOf(listener);
    if (i >= 0) list.splice(i, 1);
  }

  fire(): void {
    if (this.aborted || this.done) return;
    this.aborted = true;
    this.reason = this.makeReason();
    const list = this.#listeners;
    this.#listeners = undefined;
    list?.forEach((listener) => listener());
  }
}

/**
 * All requests with the same timeout, in start order: their deadlines are in the same order, so
 * one timer for the oldest unfinished one is enough. Finished requests at the head are dropped
 * at once (requests to one endpoint mostly finish in order), the rest when the head passes them.
 */
class Lane {
  #items: Deadline[] = [];
  #head = 0;
  #timer: NodeJS.Timeout | undefined;

  push(deadline: Deadline): void {
    this.#items.push(deadline);
    if (!this.#timer) this.#arm(deadline.at - performance.now());
  }

  /** Drops finished deadlines from the head. */
  trim(): void {
    const items = this.#items;
    while (this.#head < items.length && items[this.#head]!.done) this.#head += 1;
    if (this.#head === items.length) {
      items.length = 0;
      this.#head = 0;
    } else if (this.#head >= 1_024 && this.#head * 2 >= items.length) {
      this.#items = items.slice(this.#head);
      this.#head = 0;
    }
  }

  close(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(delayMs: number): void {
    this.#timer = setTimeout(() => this.#expire(), Math.max(1, Math.ceil(delayMs)));
    this.#timer.unref();
  }

  #expire(): void {
    this.#timer = undefined;
    const now = performance.now();
    const items = this.#items;
    while (this.#head < items.length) {
      const head = items[this.#head]!;
      if (!head.done) {
        if (head.at > now) break;
        head.fire();
        head.done = true;
      }
      this.#head += 1;
    }
    this.trim();
    const next = this.#items[this.#head];
    if (next) this.#arm(next.at - now);
  }
}

/** Hands out `Deadline`s and fires them on time, with one timer per distinct timeout. */
export class DeadlineQueue {
  readonly #lanes = new Map<number, Lane>();

  /** A deadline `timeoutMs` from now; `reason` makes the abort reason if it fires. */
  start(timeoutMs: number, reason: () => Error): Deadline {
    let lane = this.#lanes.get(timeoutMs);
    if (!lane) this.#lanes.set(timeoutMs, (lane = new Lane()));
    const deadline = new Deadline(performance.now() + timeoutMs, reason);
    lane.push(deadline);
    return deadline;
  }

  /** The request finished (answered, failed or aborted): its deadline no longer fires. */
  finish(deadline: Deadline, timeoutMs: number): void {
    deadline.done = true;
    this.#lanes.get(timeoutMs)?.trim();
  }

  close(): void {
    for (const lane of this.#lanes.values()) lane.close();
    this.#lanes.clear();
  }
}
