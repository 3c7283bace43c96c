import { chainId } from './queue-at.ts';

/**
 * The chain per destination and user: the steps that read and write a user's queue run one after
 * the other, in memory only while a step runs.
 */
export class UserChains {
  readonly #chains = new Map<string, Promise<unknown>>();

  /** Whether a step of the chain runs or waits. */
  has(chain: string): boolean {
    return this.#chains.has(chain);
  }

  /** Runs `work` after every earlier step of the same destination and user (never an attempt: those run outside). */
  serial<T>(destinationId: string, key: string, work: () => Promise<T>): Promise<T> {
    const id = chainId(destinationId, key);
    const before = this.#chains.get(id) ?? Promise.resolve();
    const run = before.then(work, work);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.#chains.set(id, tail);
    void tail.then(() => {
      if (this.#chains.get(id) === tail) this.#chains.delete(id);
    });
    return run;
  }
}
