import { ORDERING_IDLE_AHEAD, ORDERING_IDLE_WAIT_MS } from '../service/constants.ts';
import type { HeldEvents } from './held-events.ts';
import type { OrderingStore } from './ordering-store.ts';
import { chainId, isMoving, type Flight, type QueueAt, type WakeReason } from './queue-at.ts';

/**
 * A waiting record of a moving queue waiting for its turn: woken when its user's queue moves. It
 * stays listed until its next step decides again (woken, it still counts as in hand).
 */
export interface AwaitedTurn {
  seq: number;
  bytes: number;
  /** Resolves true when woken, false after `idleWaitMs` or at shutdown. */
  moved: Promise<boolean>;
  wake: () => void;
  woken: boolean;
  /** Its `idleWaitMs`, counted again from each move of its queue: only a queue that stopped moving sends it round. */
  timer: NodeJS.Timeout;
  /** Waits with its handler slot given back, its body counted in `ORDERING_HELD_BYTES` (and its user's share of it). */
  inMemory: boolean;
}

/**
 * What `TurnWaits` reads: the queues, the attempts in flight (by chain), the memory held, how long a
 * wait lasts (default 30 s) and whether the process is shutting down (a wait then ends false).
 */
export interface TurnWaitsDeps {
  store: Pick<OrderingStore, 'get'>;
  flights: ReadonlyMap<string, Flight>;
  held: Pick<HeldEvents, 'fits' | 'count'>;
  /** The most body bytes one user's records may wait with in memory, per destination (a share of `ORDERING_HELD_BYTES`). */
  maxUserBytes: number;
  idleWaitMs?: number;
  closed: () => boolean;
}

/** Per chain, the waiting records waiting for their turn, by sequence number. */
export class TurnWaits {
  readonly #turns = new Map<string, Map<number, AwaitedTurn>>();
  /** Per chain, the body bytes of its records waiting in memory. */
  readonly #userBytes = new Map<string, number>();
  readonly #deps: TurnWaitsDeps;
  constructor(deps: TurnWaitsDeps) {
    this.#deps = deps;
  }

  /**
   * A record read before its turn waits for it here rather than going round the waiting topic: in
   * memory with its slot given back while its body fits (`ORDERING_HELD_BYTES`, and its user's
   * share of it), whether its queue is held by a head or moving; past that, in its slot, only in a
   * moving queue (held by nothing but attempts in flight) while the front of the queue is in hand
   * (in flight, or waiting here), so that the queue moves and wakes it. Undefined when neither
   * applies (it goes round, or waits for its partition's progress). One user's records thus never
   * hold their partition's slots while memory allows, and the others' records behind them are read.
   */
  await(
    at: QueueAt,
    place: { seq: number; bytes: number; first: number; inFlight: boolean; moving: boolean },
  ): AwaitedTurn | undefined {
    const chain = chainId(at.destination.id, at.key);
    const turns = this.#turns.get(chain) ?? new Map<number, AwaitedTurn>();
    // A second copy of a record already waiting (read again after a restart) takes the usual path.
    if (turns.has(place.seq)) return undefined;
    const userBytes = this.#userBytes.get(chain) ?? 0;
    const inMemory = userBytes + place.bytes <= this.#deps.maxUserBytes && this.#deps.held.fits(place.bytes);
    if (!inMemory && !(place.moving && (place.inFlight || turns.has(place.first)))) return undefined;
    this.#turns.set(chain, turns);
    if (inMemory) {
      this.#deps.held.count(place.bytes);
      this.#userBytes.set(chain, userBytes + place.bytes);
    }
    let wake!: (moved: boolean) => void;
    const moved = new Promise<boolean>((resolve) => (wake = resolve));
    const timer = setTimeout(() => done('timeout'), this.#deps.idleWaitMs ?? ORDERING_IDLE_WAIT_MS);
    const turn: AwaitedTurn = {
      seq: place.seq,
      bytes: place.bytes,
      moved,
      inMemory,
      woken: false,
      wake: () => done('moved'),
      timer,
    };
    const done = (why: WakeReason) => {
      if (turn.woken) return;
      turn.woken = true;
      clearTimeout(timer);
      wake(why === 'moved' && !this.#deps.closed());
    };
    turns.set(place.seq, turn);
    return turn;
  }

  /** A record's wait for its turn is over (its step decides again): no longer listed nor counted. */
  end(chain: string, turn: AwaitedTurn): void {
    const turns = this.#turns.get(chain);
    if (turns?.get(turn.seq) !== turn) return;
    turns.delete(turn.seq);
    if (turns.size === 0) this.#turns.delete(chain);
    if (!turn.inMemory) return;
    this.#deps.held.count(-turn.bytes);
    const left = (this.#userBytes.get(chain) ?? 0) - turn.bytes;
    if (left > 0) this.#userBytes.set(chain, left);
    else this.#userBytes.delete(chain);
  }

  /**
   * The user's queue moved (or its attempt in flight ended): wakes the record whose turn came and
   * those in their slots now near enough the front to wait in memory. When the queue is held again,
   * or its front is nowhere in hand, those waiting in their slots are all woken (they go round, so
   * the partition is read on to the front); those in memory keep waiting for their turn.
   */
  wake(destinationId: string, key: string): void {
    const chain = chainId(destinationId, key);
    const turns = this.#turns.get(chain);
    if (!turns) return;
    const q = this.#deps.store.get(destinationId, key);
    const inFlight = this.#deps.flights.has(chain);
    const moving = q !== undefined && isMoving(q, this.#deps.flights.get(chain));
    if (!moving || (!inFlight && !turns.has(q.first))) {
      for (const turn of [...turns.values()]) if (!turn.inMemory || q === undefined) turn.wake();
      return;
    }
    for (const turn of turns.values()) if (!turn.woken) turn.timer.refresh();
    for (let seq = q.first; seq < q.first + ORDERING_IDLE_AHEAD; seq++) {
      const turn = turns.get(seq);
      if (turn && !turn.woken && (seq === q.first ? !inFlight : !turn.inMemory)) turn.wake();
    }
  }

  /** Records waiting for their turn now: in their handler slot, and in memory with it given back. */
  counts(): { inSlot: number; inMemory: number } {
    const counts = { inSlot: 0, inMemory: 0 };
    for (const turns of this.#turns.values())
      for (const turn of turns.values()) if (!turn.woken) counts[turn.inMemory ? 'inMemory' : 'inSlot'] += 1;
    return counts;
  }

  /** Wakes every record waiting for its turn (shutdown, `closed` already true): each goes round. */
  close(): void {
    for (const turns of this.#turns.values()) for (const turn of [...turns.values()]) turn.wake();
  }
}
