import type { Destination } from '@sluice/config';
import type { QueueState } from './queue-rules.ts';

/**
 * The queue a step works on: its destination (its id, and its order settings while it has them),
 * user and partition (where its state record goes).
 */
export interface QueueAt {
  destination: Pick<Destination, 'id' | 'ordering'>;
  key: string;
  partition: number;
}

/** An attempt of a user's event in flight, outside the chain: later events wait behind it. */
export interface Flight {
  messageId: string;
  /** A fresh event attempted with nothing queued (it becomes the live head if an event is parked behind it). */
  fresh: boolean;
}

/** Why a wait ended: its queue (or partition) moved, or its `idleWaitMs` passed. */
export type WakeReason = 'moved' | 'timeout';

/** The chain of a destination and user: the key of everything held per user's queue. */
export const chainId = (destinationId: string, key: string) => `${destinationId}\u0000${key}`;

/**
 * Held by nothing but attempts in flight (no head, or a live head in flight) and no record of the
 * list format ahead: its numbered records go one after the other, each as the one before is done.
 */
export const isMoving = (q: QueueState, flight: Flight | undefined) =>
  (q.head === undefined || (q.live === true && flight !== undefined)) && (q.legacy?.length ?? 0) === 0;

/** What the queue does when its head is dead-lettered: the destination's `orderingOnDeadLetter`. */
export const onDeadLetterOf = (at: QueueAt) => at.destination.ordering!.onDeadLetter;
