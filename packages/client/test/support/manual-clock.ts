import type { Clock } from '../../src/index.ts';

interface Timer {
  id: number;
  due: number;
  callback: () => void;
}

/** A clock that moves only when told: `advance(ms)` fires the timers that fall due. */
export class ManualClock implements Clock {
  #now: number;
  #timers: Timer[] = [];
  #nextId = 1;

  constructor(start = Date.parse('2026-11-21T23:00:00.000Z')) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const timer = { id: this.#nextId++, due: this.#now + ms, callback };
    this.#timers.push(timer);
    return timer.id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers = this.#timers.filter((t) => t.id !== handle);
  }

  get pendingTimers(): number {
    return this.#timers.length;
  }

  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      const next = this.#timers.filter((t) => t.due <= target).sort((a, b) => a.due - b.due || a.id - b.id)[0];
      if (!next) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#now = next.due;
      next.callback();
    }
    this.#now = target;
  }
}
