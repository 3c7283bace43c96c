import { KEY_SEPARATOR as SEP } from '../constants.ts';
import type { CompletedSync, MemberChange } from './target-state.ts';
import type { SyncKind, SyncTarget } from './snapshot.ts';

/**
 * Records of the compacted `sluice.audience-state` topic:
 * - `m␀<kind>␀<sourceId>␀<name>␀<userId>` → `'1'` (audience member) or the trait's JSON value;
 *   a tombstone (null value) when the user is not a member any more;
 * - `s␀<kind>␀<sourceId>␀<name>` → `{ syncId, partition, offset }` of the last completed sync
 *   (the position of its final chunk on `sluice.audiences`).
 */
export type StateRecord =
  | { type: 'member'; kind: SyncKind; sourceId: string; name: string; userId: string; value: string | null }
  | { type: 'sync'; kind: SyncKind; sourceId: string; name: string; completed: CompletedSync };

export interface RawStateRecord {
  key: string;
  value: string | null;
}

export function memberRecord(target: SyncTarget, change: Pick<MemberChange, 'userId' | 'stateValue'>): RawStateRecord {
  return { key: ['m', target.kind, target.sourceId, target.name, change.userId].join(SEP), value: change.stateValue };
}

export function syncRecord(target: SyncTarget, completed: CompletedSync): RawStateRecord {
  const { syncId, partition, offset } = completed;
  return {
    key: ['s', target.kind, target.sourceId, target.name].join(SEP),
    value: JSON.stringify({ syncId, partition, offset }),
  };
}

/** Reads one state record; undefined for anything unrecognisable (skipped, never fatal). */
export function parseStateRecord(key: string, value: string | null): StateRecord | undefined {
  const parts = key.split(SEP);
  const [type, kind, sourceId, name] = parts;
  if (kind !== 'audience' && kind !== 'trait') return undefined;
  if (sourceId === undefined || name === undefined) return undefined;
  if (type === 'm' && parts.length >= 5) {
    // A user id may itself contain the separator: everything after the name is the id.
    return { type: 'member', kind, sourceId, name, userId: parts.slice(4).join(SEP), value };
  }
  if (type === 's' && parts.length === 4 && value !== null) {
    try {
      const c = JSON.parse(value) as CompletedSync;
      if (typeof c.syncId !== 'string' || !Number.isInteger(c.partition) || !Number.isInteger(c.offset))
        return undefined;
      return {
        type: 'sync',
        kind,
        sourceId,
        name,
        completed: { syncId: c.syncId, partition: c.partition, offset: c.offset },
      };
    } catch {
      return undefined;
    }
  }
  return undefined;
}
