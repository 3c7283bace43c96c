import type { Destination } from '@sluice/config';
import type { RecordSlot } from '@sluice/kafka';
import type { DeliveryJob } from './delivery-job.ts';

/** Where a turn's job was read: a new event, a due retry, a parked record, or a waiting record of an ordered destination. */
export type TurnSource = 'live' | 'retry' | 'parked' | 'waiting';

/**
 * One job's turn at its destination, as every intake hands it on (docs/CONVENTIONS.md, "The turn
 * object"): what is delivered, where, since when its window runs, where it was read, and the record
 * it came in.
 */
export interface Turn {
  job: DeliveryJob;
  destination: Destination;
  /** When the event was accepted (a first attempt's window runs from it); undefined for a retry, whose window runs from its first attempt. */
  acceptedAt: number | undefined;
  source: TurnSource;
  /** The record's partition (its user's): where the queue of an ordered destination keeps its state. */
  partition?: number;
  /** The record's consumer slot: given back while the job waits in memory behind its user's attempt in flight. */
  slot?: RecordSlot;
}

/**
 * A parked or waiting record was taken out of the topic it waited on: it is itself the drain of a
 * resumed destination, so it waits again only while that destination is stopped.
 */
export function takenOut(turn: Turn): boolean {
  return turn.source === 'parked' || turn.source === 'waiting';
}
