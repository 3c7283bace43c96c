/**
 * A counting semaphore whose limit can change while in use (the per-destination cap on
 * in-flight requests follows config reloads). Waiters are served first come, first served.
 */
export class Semaphore {
  #active = 0;
  #waiters: (() => void)[] = [];

  constructor(private limit: number) {}

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#waiters.length;
  }

  setLimit(limit: number): void {
    this.limit = limit;
    this.#wake();
  }

  async acquire(): Promise<void> {
    if (this.#active < this.limit && this.#waiters.length === 0) {
      this.#active += 1;
      return;
    }
    await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  release(): void {
    this.#active -= 1;
    this.#wake();
  }

  #wake(): void {
    while (this.#active < this.limit && this.#waiters.length > 0) {
      this.#active += 1;
      this.#waiters.shift()!();
    }
  }
}
