import type { DeliveryJob } from '../intake/delivery-job.ts';
import { isInfrastructureFailure } from '../intake/infrastructure-errors.ts';
import type { HeldEvents } from './held-events.ts';
import type { OrderingStore } from './ordering-store.ts';
import type { ParkWrites } from './park-writes.ts';
import { chainId, onDeadLetterOf, type Flight, type QueueAt } from './queue-at.ts';
import { moveQueue, type QueueMovesDeps } from './queue-moves.ts';
import { afterStep, isIdle, type StepOutcome, type WaitingPlace } from './queue-rules.ts';
import type { TurnWaits } from './turn-waits.ts';
import type { UnorderedEvents } from './unordered-events.ts';
import type { UserChains } from './user-chains.ts';

/** What an attempt in flight works with: the attempts in flight by chain, and the parts of `Ordering` it moves. */
export interface FlightsDeps {
  flights: Map<string, Flight>;
  store: Pick<OrderingStore, 'get' | 'admitsNew'>;
  chains: Pick<UserChains, 'serial'>;
  held: Pick<HeldEvents, 'has' | 'take'>;
  parks: Pick<ParkWrites, 'park' | 'roomInTail'>;
  turns: Pick<TurnWaits, 'wake'>;
  moves: QueueMovesDeps;
  unordered: Pick<UnorderedEvents, 'count'>;
}

/**
 * The users' attempts in flight, outside their chains: each run registered as in flight, then the
 * queue moved by its outcome and the events waiting in memory behind it given their turn or parked.
 */
export class Flights {
  readonly #deps: FlightsDeps;
  constructor(deps: FlightsDeps) {
    this.#deps = deps;
  }

  /**
   * Runs an attempt registered as in flight, then moves the queue by its outcome. An attempt that
   * throws a failure of its own record (it goes to `sluice.rejected`) counts as dead for the queue,
   * so nothing waits for it forever; an infrastructure failure leaves the queue as it is (the
   * record is read again after the restart).
   */
  async flown(
    at: QueueAt,
    flight: { job: DeliveryJob; fromWaiting?: WaitingPlace },
    run: () => Promise<StepOutcome>,
  ): Promise<void> {
    const { job, ...how } = flight;
    const { destination, key } = at;
    const id = destination.id;
    const chain = chainId(id, key);
    const { store, moves } = this.#deps;
    if (how.fromWaiting) this.#deps.flights.set(chain, { messageId: job.messageId, fresh: false });
    const written: Promise<void>[] = [];
    let outcome: StepOutcome;
    try {
      outcome = await run();
    } catch (err) {
      await this.#landed(at, async () => {
        if (isInfrastructureFailure(err)) throw err;
        const q = store.get(id, key);
        const step = { messageId: job.messageId, outcome: 'dead' as const, onDeadLetter: 'release' as const, ...how };
        await moveQueue(moves, at, { before: q, after: afterStep(q, step) });
      });
      throw err;
    }
    await this.#landed(at, async () => {
      const q = store.get(id, key);
      const after = afterStep(q, { messageId: job.messageId, outcome, onDeadLetter: onDeadLetterOf(at), ...how });
      if (isIdle(q) && !isIdle(after) && !store.admitsNew()) {
        // A new queue while the memory budget is spent: its later events are not held for it.
        this.#deps.unordered.count(id, key);
        return;
      }
      await moveQueue(moves, at, { before: q, after, ...(how.fromWaiting && { written }) });
    });
    // The next event of the queue went once this one was done with: a crash before this state
    // record is written sends this one again (a duplicate), never one out of order.
    await Promise.all(written);
  }

  /**
   * Parks the events waiting in memory behind the user's attempt, in order: behind `flight` (which
   * becomes the live head) while it is still in flight, else behind the user's head. One whose
   * park fails is told so (its record is rejected); an infrastructure failure fails the rest too.
   */
  async parkHeld(at: QueueAt, flight: Flight | undefined): Promise<void> {
    const chain = chainId(at.destination.id, at.key);
    const held = this.#deps.held.take(chain);
    for (const h of held) {
      await this.#deps.parks.roomInTail(at);
      const q = this.#deps.store.get(at.destination.id, at.key);
      const behind = flight?.fresh && isIdle(q) ? flight.messageId : undefined;
      this.#deps.parks
        .park(at, h.turn.job, { accepted: h.turn.acceptedAt, q, behind })
        .then(() => h.next('parked'), h.fail);
    }
  }

  /**
   * The user's attempt in flight is done with (`move` writes what became of it): the next event
   * waiting in memory behind it goes in flight, or — the user now held (the attempt became its
   * head) — they are all parked behind it, in order. When `move` throws, they fail with it (an
   * infrastructure failure: their records are read again after the restart).
   */
  #landed(at: QueueAt, move: () => Promise<void>): Promise<void> {
    const { destination, key } = at;
    const chain = chainId(destination.id, key);
    const { store, held } = this.#deps;
    return this.#deps.chains.serial({ destinationId: destination.id, key, kind: 'landed' }, async () => {
      this.#deps.flights.delete(chain);
      const before = store.get(destination.id, key);
      try {
        await move();
      } catch (err) {
        for (const h of held.take(chain)) h.fail(err);
        throw err;
      }
      // A queue that moved woke its waiting records already (`moveQueue`); one that did not may have waited for this attempt.
      if (!held.has(chain)) {
        if (store.get(destination.id, key) === before) this.#deps.turns.wake(destination.id, key);
        return;
      }
      if (!isIdle(store.get(destination.id, key))) return this.parkHeld(at, undefined);
      const next = held.take(chain, 1)[0]!;
      this.#deps.flights.set(chain, { messageId: next.turn.job.messageId, fresh: true });
      next.next('attempt');
    });
  }
}
