import { chainId } from './queue-at.ts';

/** What a step of a user's chain does (`sluice_deliverer_ordering_longest_step_seconds`). */
export type ChainStepKind = 'fresh' | 'retry' | 'release' | 'waiting' | 'landed' | 'left';

/** A step of the chain of a destination and user. */
export interface ChainStep {
  destinationId: string;
  key: string;
  kind: ChainStepKind;
}

/** The step that has run longest now: what it does, where, and since when. */
export interface RunningStep {
  destinationId: string;
  kind: ChainStepKind;
  since: number;
}

/**
 * The chain per destination and user: the steps that read and write a user's queue run one after
 * the other, in memory only while a step runs. It counts the steps waiting behind an earlier one
 * of their user and knows the step running per chain, so a step that never ends (a write that
 * never returns) shows in the metrics instead of silently holding its user's records.
 */
export class UserChains {
  readonly #chains = new Map<string, Promise<unknown>>();
  /** Per chain, the step running now. */
  readonly #running = new Map<string, RunningStep>();
  #queued = 0;
  readonly #now: () => number;
  constructor(now: () => number) {
    this.#now = now;
  }

  /** Whether a step of the chain runs or waits. */
  has(chain: string): boolean {
    return this.#chains.has(chain);
  }

  /** Steps waiting for an earlier step of their user to end. */
  get queued(): number {
    return this.#queued;
  }

  /** The step running longest now, if any runs. */
  longest(): RunningStep | undefined {
    let oldest: RunningStep | undefined;
    for (const step of this.#running.values()) if (!oldest || step.since < oldest.since) oldest = step;
    return oldest;
  }

  /** Runs `work` after every earlier step of the same destination and user (never an attempt: those run outside). */
  serial<T>(step: ChainStep, work: () => Promise<T>): Promise<T> {
    const id = chainId(step.destinationId, step.key);
    const before = this.#chains.get(id);
    if (before) this.#queued++;
    const start = async () => {
      if (before) this.#queued--;
      const running: RunningStep = { destinationId: step.destinationId, kind: step.kind, since: this.#now() };
      this.#running.set(id, running);
      try {
        return await work();
      } finally {
        if (this.#running.get(id) === running) this.#running.delete(id);
      }
    };
    const run = (before ?? Promise.resolve()).then(start, start);
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
