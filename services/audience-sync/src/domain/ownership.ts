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
  /**
   * Owner again after being out of the group (a Kafka outage crashed the consumer): consume only if
   * the group's committed offsets are still the ones this instance committed, i.e. nobody else
   * completed a sync meanwhile.
   */
  | 'check-committed'
  /** Owner again after a standby spell: another instance may have written state; restart to read it. */
  | 'rebuild';

export interface OwnershipState {
  everOwned: boolean;
  standbySinceOwned: boolean;
  leftSinceOwned: boolean;
}

export const INITIAL_OWNERSHIP: OwnershipState = { everOwned: false, standbySinceOwned: false, leftSinceOwned: false };

/** The verdict of one group join, and the state after it (the caller records a passed check with `ownershipConfirmed`). */
export function ownershipOnJoin(
  state: OwnershipState,
  owns: boolean,
): { verdict: OwnershipVerdict; state: OwnershipState } {
  if (!owns) return { verdict: 'standby', state: { ...state, standbySinceOwned: state.everOwned } };
  if (!state.everOwned) return { verdict: 'check-fresh', state };
  if (state.standbySinceOwned) return { verdict: 'rebuild', state };
  return { verdict: state.leftSinceOwned ? 'check-committed' : 'consume', state };
}

/** The consumer left the group (crash, stop): the next ownership needs a check. */
export function ownershipOnLeave(state: OwnershipState): OwnershipState {
  return { ...state, leftSinceOwned: state.everOwned };
}

/** A check passed: this instance owns the partitions with a current state. */
export function ownershipConfirmed(state: OwnershipState): OwnershipState {
  return { ...state, everOwned: true, leftSinceOwned: false };
}

/** True when two per-partition offset maps are equal (state topic log ends, or committed offsets). */
export function sameOffsets(before: ReadonlyMap<number, number>, now: ReadonlyMap<number, number>): boolean {
  if (before.size !== now.size) return false;
  for (const [partition, offset] of now) if (before.get(partition) !== offset) return false;
  return true;
}
