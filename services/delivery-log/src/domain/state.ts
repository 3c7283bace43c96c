/**
 * The state of one message at one destination (docs/delivery-log.md, "State machine"), derived from
 * the records of the pipeline in whatever order they are read:
 *
 * - `delivering`: the event was read, no attempt yet;
 * - `waiting`: the destination delivers per user in order, and the event waits behind an earlier
 *   event of its user (docs/reference/ordering.md); the row's last error names that event;
 * - `retrying`: the last attempt failed and a retry is due;
 * - `delivered`: an attempt succeeded (final);
 * - `filtered`: the destination's filter refused the event, so nothing was attempted (final, unless
 *   the event is attempted after all: read again after its filter changed);
 * - `dead`: the event was dead-lettered; only an attempt made after that (a replay) moves it on;
 * - `rejected`: the event was rejected (bad input), kept per message.
 */
export const DELIVERY_STATES = [
  'delivering',
  'waiting',
  'retrying',
  'delivered',
  'filtered',
  'dead',
  'rejected',
] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

export interface StateAt {
  state: DeliveryState;
  /** Epoch ms of the fact that set the state (attempt start, time of death). */
  at: number;
}

/** What a record says about a message at a destination. */
export type Fact =
  | { kind: 'attempt'; outcome: 'success' | 'retryable' | 'permanent'; at: number }
  | { kind: 'dead'; at: number }
  | { kind: 'filtered'; at: number }
  | { kind: 'waiting'; at: number };

function factState(fact: Fact): DeliveryState {
  if (fact.kind === 'dead') return 'dead';
  if (fact.kind === 'filtered') return 'filtered';
  if (fact.kind === 'waiting') return 'waiting';
  return fact.outcome === 'success' ? 'delivered' : 'retrying';
}

/**
 * The state after `fact`, given the current one. Monotonic and order-independent for the facts
 * one delivery run produces: `delivered` is final (a late failure of the same run, or an older
 * record read again, never moves it back); `filtered` is final unless an attempt is read; `dead`
 * wins over any earlier failure; a failure or success newer than the death (a replayed attempt)
 * leaves `dead`. Applying the same fact twice changes nothing.
 */
export function advance(current: StateAt | undefined, fact: Fact): StateAt {
  const next: StateAt = { state: factState(fact), at: fact.at };
  // A filter decides before any attempt: once something was attempted, a filtered record (the event
  // read again under a changed filter) says less than the attempts did.
  if (fact.kind === 'filtered') return current === undefined || current.state === 'delivering' ? next : current;
  // Waiting comes before the event's own attempts: it only moves a row nothing was attempted for.
  if (fact.kind === 'waiting') return current === undefined || current.state === 'delivering' ? next : current;
  const notStarted = current === undefined || current.state === 'delivering' || current.state === 'waiting';
  if (notStarted || current.state === 'filtered') return next;
  if (current.state === 'delivered' || current.state === 'rejected') return current;
  if (next.state === 'delivered') return next;
  if (current.state === 'dead') return next.state === 'retrying' && fact.at > current.at ? next : current;
  // current is retrying: a death or a newer failure moves it; an older failure keeps the newest time.
  if (next.state === 'dead') return fact.at >= current.at ? next : current;
  return fact.at >= current.at ? next : current;
}
