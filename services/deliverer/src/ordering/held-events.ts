import type { RecordSlot } from '@sluice/kafka';
import type { Turn } from '../intake/turn.ts';
import { ORDERING_HELD_BYTES, ORDERING_HELD_EVENTS } from '../service/constants.ts';
import type { DelivererMetrics } from '../service/metrics.ts';

/**
 * An event waiting in memory behind its user's attempt in flight (its handler slot given back):
 * given its turn (`attempt`) when that attempt is done with, or parked behind it (`parked`).
 */
export interface Held {
  turn: Turn;
  bytes: number;
  next: (next: 'attempt' | 'parked') => void;
  fail: (err: unknown) => void;
}

/** What `HeldEvents` needs: the held-bytes gauge and the bounds (`OrderingDeps.maxHeld`, `maxHeldBytes`). */
export interface HeldEventsDeps {
  metrics: Pick<DelivererMetrics, 'orderingHeldBytes'>;
  maxHeld?: number;
  maxHeldBytes?: number;
}

/**
 * The memory held by events waiting with their handler slots given back: per chain, the events
 * waiting in memory behind its attempt in flight, in order; and the body bytes of all that waits
 * in memory (those, the records waiting for their turn, the jobs waiting for their user's steps),
 * against `ORDERING_HELD_BYTES`.
 */
export class HeldEvents {
  readonly #held = new Map<string, Held[]>();
  #heldBytes = 0;
  readonly #deps: HeldEventsDeps;
  constructor(deps: HeldEventsDeps) {
    this.#deps = deps;
  }

  /** Whether `bytes` more fit in `ORDERING_HELD_BYTES`. */
  fits(bytes: number): boolean {
    return this.#heldBytes + bytes <= (this.#deps.maxHeldBytes ?? ORDERING_HELD_BYTES);
  }

  /** Events waiting in memory behind their users' attempts in flight, all chains. */
  get size(): number {
    let n = 0;
    for (const held of this.#held.values()) n += held.length;
    return n;
  }

  /** Whether events wait in memory behind the chain's attempt. */
  has(chain: string): boolean {
    return (this.#held.get(chain)?.length ?? 0) > 0;
  }

  /** Waits in memory behind the user's attempt in flight, unless that passes a bound (undefined). */
  hold(chain: string, turn: Turn): Promise<'attempt' | 'parked'> | undefined {
    const held = this.#held.get(chain) ?? [];
    const bytes = turn.job.body.length;
    if (held.length >= (this.#deps.maxHeld ?? ORDERING_HELD_EVENTS)) return undefined;
    if (!this.fits(bytes)) return undefined;
    return new Promise((next, fail) => {
      held.push({ turn, bytes, next, fail });
      this.#held.set(chain, held);
      this.#heldBytes += bytes;
      this.#deps.metrics.orderingHeldBytes.set(this.#heldBytes);
    });
  }

  /** Takes the first `count` (default all) events waiting in memory behind the chain's attempt. */
  take(chain: string, count?: number): Held[] {
    const held = this.#held.get(chain) ?? [];
    const taken = held.splice(0, count ?? held.length);
    if (held.length === 0) this.#held.delete(chain);
    for (const h of taken) this.#heldBytes -= h.bytes;
    this.#deps.metrics.orderingHeldBytes.set(this.#heldBytes);
    return taken;
  }

  /**
   * Gives the record's slot back while its job waits in memory (for its user's earlier steps, or
   * for its park to be written), counted in `ORDERING_HELD_BYTES`; past that bound it keeps its
   * slot (undefined). Returns the uncounting.
   */
  giveBack(slot: RecordSlot | undefined, bytes: number): (() => void) | undefined {
    if (!slot || !this.fits(bytes)) return undefined;
    this.count(bytes);
    slot.release();
    let counted = true;
    return () => {
      if (counted) this.count(-bytes);
      counted = false;
    };
  }

  /** Counts `bytes` more (or fewer, negative) held in memory. */
  count(bytes: number): void {
    this.#heldBytes += bytes;
    this.#deps.metrics.orderingHeldBytes.set(this.#heldBytes);
  }
}
