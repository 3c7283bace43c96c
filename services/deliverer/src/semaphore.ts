import { WaiterQueue } from './waiter-queue.ts';

/**
 * A counting semaphore whose limit can change while in use (the per-destination cap on
 * in-flight requests follows config reloads). Waiters are served first come, first served.
 */
export class Semaphore {
  #active = 0;
  readonly #waiters = new WaiterQueue<() => void>();

  private currentLimit: number;
  constructor(currentLimit: number) {
    this.currentLimit = currentLimit;
  }

  get limit(): number {
    return this.currentLimit;
  }

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#waiters.size;
  }

  setLimit(limit: number): void {
    this.currentLimit = limit;
    this.#wake();
  }

  /** Takes a slot if one is free and nobody waits; no promise, so the common case costs nothing. */
  tryAcquire(): boolean {
    if (this.#active < this.limit && this.waiting === 0) {
      this.#active += 1;
      return true;
    }
    return false;
  }

  async acquire(): Promise<void> {
    if (this.tryAcquire()) return;
    await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  release(): void {
    this.#active -= 1;
    this.#wake();
  }

  #wake(): void {
    while (this.#active < this.limit && this.#waiters.size > 0) {
      this.#active += 1;
      this.#waiters.shift()!();
    }
  }
}
