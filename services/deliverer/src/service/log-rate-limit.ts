export interface LogRateLimitOptions {
  /** At most one line per key per this many ms. */
  intervalMs: number;
  /** Keys remembered at most (memory bound); default 10,000. The oldest are forgotten first. */
  maxKeys?: number;
  now: () => number;
}

/** A line may be written, carrying how many lines of its key were held back since the last one written. */
export type LogAdmission = { write: true; suppressed: number } | { write: false };

interface KeyState {
  writtenAt: number;
  suppressed: number;
}

/**
 * Rate limit of log lines per key (for example one endpoint): the first line of a key is written,
 * the others within `intervalMs` after it are counted, and the next line written after the
 * interval reports that count. Pure apart from the injected clock; memory bounded by `maxKeys`.
 */
export class LogRateLimiter {
  readonly #intervalMs: number;
  readonly #maxKeys: number;
  readonly #now: () => number;
  readonly #keys = new Map<string, KeyState>();

  constructor(options: LogRateLimitOptions) {
    this.#intervalMs = options.intervalMs;
    this.#maxKeys = options.maxKeys ?? 10_000;
    this.#now = options.now;
  }

  admit(key: string): LogAdmission {
    const now = this.#now();
    const state = this.#keys.get(key);
    if (state && now - state.writtenAt < this.#intervalMs) {
      state.suppressed++;
      return { write: false };
    }
    const suppressed = state?.suppressed ?? 0;
    if (state)
      this.#keys.delete(key); // re-inserted last: the map's order is the order of last writes
    else this.#makeRoom();
    this.#keys.set(key, { writtenAt: now, suppressed: 0 });
    return { write: true, suppressed };
  }

  /** Keys remembered (for tests of the memory bound). */
  get size(): number {
    return this.#keys.size;
  }

  #makeRoom(): void {
    if (this.#keys.size < this.#maxKeys) return;
    const oldest = this.#keys.keys().next();
    if (!oldest.done) this.#keys.delete(oldest.value);
  }
}
