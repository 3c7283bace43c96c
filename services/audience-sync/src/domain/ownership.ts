/**
 * When this instance may consume snapshot chunks (docs/audiences.md, "One active instance"). The
 * membership state is read from the state topic once, at start; it is current only while no other
 * instance has written to that topic since. Every partition goes to one member of the group, so
 * each join either makes this instance the owner or a standby.
 */
export type OwnershipVerdict =
  /** Owner, as at the previous join: go on consuming. */
  | 'consume'
  /** No partitions: stay ready and idle. */
  | 'standby'
  /** First time owner: consume only if the state topic has not grown since the state was read. */
  | 'check-fresh'
  /** Owner again after a standby spell: another instance may have written state; restart to read it. */
  | 'rebuild';

export interface OwnershipState {
  everOwned: boolean;
  standbySinceOwned: boolean;
}

export const INITIAL_OWNERSHIP: OwnershipState = { everOwned: false, standbySinceOwned: false };

/** The verdict of one group join, and the state after it (`everOwned` is set once the caller consumes). */
export function ownershipOnJoin(
  state: OwnershipState,
  owns: boolean,
): { verdict: OwnershipVerdict; state: OwnershipState } {
  if (!owns) return { verdict: 'standby', state: { ...state, standbySinceOwned: state.everOwned } };
  if (!state.everOwned) return { verdict: 'check-fresh', state };
  return { verdict: state.standbySinceOwned ? 'rebuild' : 'consume', state };
}

/** True when the state topic's log end is where it was when the state was read, partition by partition. */
export function stateUnchanged(readUpTo: Map<number, number>, now: Map<number, number>): boolean {
  if (readUpTo.size !== now.size) return false;
  for (const [partition, end] of now) if (readUpTo.get(partition) !== end) return false;
  return true;
}
