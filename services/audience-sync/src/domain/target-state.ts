import { LIVE, MemberIndex, PENDING, SEEN } from './member-index.ts';
import type { SnapshotChunk, SyncTarget } from './snapshot.ts';

/** Where a record sits on `sluice.audiences`. */
export interface LogPosition {
  partition: number;
  offset: number;
}

/** The last completed sync of a target, as kept in `sluice.audience-state`. */
export interface CompletedSync extends LogPosition {
  syncId: string;
}

/** One change a completed sync produces: the identify's trait value, and the state to store. */
export interface MemberChange {
  userId: string;
  /** Audience: `true` joined, `false` left. Trait: the new value, or `null` when the user lost it. */
  value: unknown;
  /** Value stored under the member's state key: `'1'`, the trait's JSON, or `null` (tombstone). */
  stateValue: string | null;
}

export type ChunkVerdict =
  | { action: 'ignored'; reason: 'already_completed' | 'replayed' }
  | { action: 'applied'; abandoned?: string; complete: boolean };

/**
 * Membership of one audience or computed trait and the diff of the sync in progress (docs/reference/audiences.md).
 * Pure: chunks in, changes out. Nothing is decided before `final`: while a sync runs, members are
 * only marked (SEEN; PENDING for joiners and changed values), so an abandoned sync leaves no trace.
 */
export class TargetState {
  readonly index: MemberIndex;
  completed: CompletedSync | undefined;
  /** The sync being received: its id and the position of its first chunk (offsets are held there). */
  current: (LogPosition & { syncId: string }) | undefined;

  readonly target: SyncTarget;
  constructor(target: SyncTarget) {
    this.target = target;
    this.index = new MemberIndex({ withValues: target.kind === 'trait' });
  }

  /**
   * Applies one chunk read at `at`. Chunks of the completed sync (a client resending it) and records
   * at or before its final chunk (a replay after restart) are ignored; a chunk of a new sync id while
   * another is in progress abandons the unfinished one.
   */
  applyChunk(chunk: SnapshotChunk, at: LogPosition): ChunkVerdict {
    const done = this.completed;
    if (done && chunk.syncId === done.syncId) return { action: 'ignored', reason: 'already_completed' };
    if (done && at.partition === done.partition && at.offset <= done.offset)
      return { action: 'ignored', reason: 'replayed' };
    let abandoned: string | undefined;
    if (this.current && this.current.syncId !== chunk.syncId) {
      abandoned = this.current.syncId;
      this.abandon();
    }
    this.current ??= { syncId: chunk.syncId, partition: at.partition, offset: at.offset };
    if (chunk.kind === 'audience') for (const userId of chunk.members) this.#markMember(userId);
    else for (const [userId, json] of chunk.values) this.#markValue(userId, json);
    return { action: 'applied', complete: chunk.final, ...(abandoned !== undefined && { abandoned }) };
  }

  /**
   * The changes of the sync in progress against the last completed one, in entry order. Does not
   * mutate, so it can be walked once to emit identifies and once more to write state.
   */
  *changes(): Generator<MemberChange> {
    const { index } = this;
    const audience = this.target.kind === 'audience';
    for (let e = 0; e < index.entryCount; e++) {
      const f = index.flags(e);
      if (f & PENDING) {
        if (audience) yield { userId: index.userId(e), value: true, stateValue: '1' };
        else {
          const json = index.pendingValue(e);
          yield { userId: index.userId(e), value: JSON.parse(json), stateValue: json };
        }
      } else if (f & LIVE && !(f & SEEN)) {
        yield { userId: index.userId(e), value: audience ? false : null, stateValue: null };
      }
    }
  }

  /** Makes the sync in progress the completed one (after its identifies and state are written). */
  complete(at: LogPosition): void {
    const { index } = this;
    for (let e = 0; e < index.entryCount; e++) {
      const f = index.flags(e);
      if (f === 0) continue;
      if (f & PENDING) {
        if (index.withValues) index.setValue(e, index.pendingValue(e));
        index.setFlags(e, LIVE);
      } else if (f & SEEN) index.setFlags(e, LIVE);
      else index.remove(e);
    }
    index.clearPendingValues();
    index.compactIfWasteful();
    this.completed = { syncId: this.current!.syncId, partition: at.partition, offset: at.offset };
    this.current = undefined;
  }

  /** Forgets the sync in progress. */
  abandon(): void {
    const { index } = this;
    for (let e = 0; e < index.entryCount; e++) {
      const f = index.flags(e);
      if (f & LIVE) index.setFlags(e, LIVE);
      else index.remove(e);
    }
    index.clearPendingValues();
    this.current = undefined;
  }

  /** Rebuild from `sluice.audience-state`: the member's stored value, or `null` for "not a member". */
  loadMember(userId: string, stateValue: string | null): void {
    const { index } = this;
    const e = index.find(userId);
    if (stateValue === null) {
      if (e >= 0) index.remove(e);
      return;
    }
    const entry = e >= 0 ? e : index.insert(userId, LIVE);
    if (index.withValues) index.setValue(entry, stateValue);
  }

  #markMember(userId: string): void {
    const { index } = this;
    const e = index.find(userId);
    if (e < 0) index.insert(userId, PENDING | SEEN);
    else index.setFlags(e, index.flags(e) | SEEN);
  }

  #markValue(userId: string, json: string): void {
    const { index } = this;
    let e = index.find(userId);
    if (e < 0) {
      e = index.insert(userId, PENDING | SEEN);
      index.setPendingValue(e, json);
      return;
    }
    const f = index.flags(e) | SEEN;
    if (f & LIVE && index.valueEquals(e, json)) {
      // Unchanged (or changed earlier in this sync and back again): nothing to emit.
      index.setFlags(e, f & ~PENDING);
      return;
    }
    index.setFlags(e, f | PENDING);
    index.setPendingValue(e, json);
  }
}
