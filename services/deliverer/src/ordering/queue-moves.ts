import type { OrderingStore } from './ordering-store.ts';
import type { ParkWrites } from './park-writes.ts';
import type { PartitionProgress } from './partition-progress.ts';
import type { QueueAt } from './queue-at.ts';
import type { QueueState } from './queue-rules.ts';
import type { TurnWaits } from './turn-waits.ts';

/** A queue before and after a step, and where its state record's write goes when the caller waits for it (`moveQueue`). */
export interface QueueMove {
  before: QueueState | undefined;
  after: QueueState | undefined;
  written?: Promise<void>[];
}

/** What a move touches. */
export interface QueueMovesDeps {
  /** Where the moved queue's state record goes (`sluice.ordering`). */
  store: Pick<OrderingStore, 'put'>;
  /** The user's parks, forgotten once none is being written and no tail is left. */
  parks: Pick<ParkWrites, 'dropLane'>;
  /** The user's records waiting for their turn, woken by the move. */
  turns: Pick<TurnWaits, 'wake'>;
  /** The partition's idle records, woken when the move freed something. */
  progress: Pick<PartitionProgress, 'progressed'>;
}

/**
 * Writes a moved queue, and wakes the idle waiting records of its partition when it freed
 * something. With `written`, the state record's write is not waited for here but added to it
 * (the queue in memory moves at once, so the next event's turn need not wait for Kafka): the
 * caller waits for it before its record is done with, and the writes of one queue go in order.
 */
export async function moveQueue(deps: QueueMovesDeps, at: QueueAt, move: QueueMove): Promise<void> {
  const { before, after, written } = move;
  if (after === before) return;
  const write = deps.store.put({ destinationId: at.destination.id, key: at.key, partition: at.partition }, after);
  deps.parks.dropLane(at);
  if (written) {
    // Waited for by the caller; until then a failure is not unhandled.
    write.catch(() => undefined);
    written.push(write);
  } else await write;
  deps.turns.wake(at.destination.id, at.key);
  const freed =
    before?.head !== after?.head || before?.first !== after?.first || before?.legacy?.length !== after?.legacy?.length;
  if (freed && after?.head === undefined) deps.progress.progressed(at.destination.id, at.partition);
}
