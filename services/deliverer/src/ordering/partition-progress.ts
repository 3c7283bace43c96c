import { randomUUID } from 'node:crypto';
import { ORDERING_IDLE_WAIT_MS } from '../service/constants.ts';
import type { WakeReason } from './queue-at.ts';

/**
 * Progress (a queue moved) per destination and partition, and the waiting records idle until the
 * next: a record read back in the round it was written (no progress since) waits here rather than
 * going round again.
 */
export class PartitionProgress {
  readonly #progress = new Map<string, number>();
  readonly #idle = new Map<string, Set<() => void>>();
  /** This process's rounds: a waiting record written by another process always goes round once more. */
  readonly #token = randomUUID();
  readonly #deps: { idleWaitMs?: number; closed: () => boolean };
  /** `idleWaitMs`: how long an idle wait lasts (default 30 s); `closed`: true once shutting down (a wait then ends false). */
  constructor(deps: { idleWaitMs?: number; closed: () => boolean }) {
    this.#deps = deps;
  }

  /** A queue of the partition freed something: wakes its idle waiting records. */
  progressed(id: string, partition: number): void {
    const at = `${id}/${partition}`;
    this.#progress.set(at, (this.#progress.get(at) ?? 0) + 1);
    const waiters = this.#idle.get(at);
    if (waiters) for (const wake of [...waiters]) wake();
  }

  /** The partition's current round: this process and its count of progress there. */
  round(id: string, partition: number): string {
    return `${this.#token}:${this.#progress.get(`${id}/${partition}`) ?? 0}`;
  }

  /**
   * Resolves true at the next progress in the partition after `round` (at once if some came between
   * the decision and this call), false after `idleWaitMs` or at shutdown.
   */
  idleUntilProgress(id: string, partition: number, round: string | undefined): Promise<boolean> {
    if (this.round(id, partition) !== round) return Promise.resolve(!this.#deps.closed());
    const at = `${id}/${partition}`;
    let waiters = this.#idle.get(at);
    if (!waiters) this.#idle.set(at, (waiters = new Set()));
    const set = waiters;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => done('timeout'), this.#deps.idleWaitMs ?? ORDERING_IDLE_WAIT_MS);
      const done = (why: WakeReason) => {
        clearTimeout(timer);
        set.delete(wake);
        resolve(why === 'moved' && !this.#deps.closed());
      };
      const wake = () => done('moved');
      set.add(wake);
    });
  }

  /** Waiting records idle until their partition's next progress now (each in its handler slot). */
  get idle(): number {
    let n = 0;
    for (const waiters of this.#idle.values()) n += waiters.size;
    return n;
  }

  /** Wakes every idle wait (shutdown, `closed` already true): each resolves false. */
  close(): void {
    for (const waiters of this.#idle.values()) for (const wake of [...waiters]) wake();
  }
}
