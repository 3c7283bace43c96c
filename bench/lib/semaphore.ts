import { WaiterQueue } from '@sluice/service-kit';

/**
 * A counting semaphore for the benchmark's own posters: at most `limit` requests at once, as the
 * deliverer's in-flight cap allows. Waiters are served first come, first served.
 */
export class Semaphore {
  #active = 0;
  readonly #limit: number;
  readonly #waiters = new WaiterQueue<() => void>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Takes a slot if one is free and nobody waits; no promise, so the common case costs nothing. */
  tryAcquire(): boolean {
    if (this.#active < this.#limit && this.#waiters.size === 0) {
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
    while (this.#active < this.#limit && this.#waiters.size > 0) {
      this.#active += 1;
      this.#waiters.shift()!();
    }
  }
}
