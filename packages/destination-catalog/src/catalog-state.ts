import type { CatalogEntry, ParsedRecord } from './record.ts';

/** The record in force for an id: its version (a deletion's too) and its key. */
export interface Head {
  version: number;
  key: string;
}

/**
 * The catalog as its topic says, record by record (docs/reference/runtime-destinations.md, "Apply
 * rule"). Every reader folds the one partition in the same order with `applyRecord`, so every
 * reader holds the same state at the same offset.
 */
export interface CatalogState {
  /** The destinations in force, by id: the `Catalog` changes are checked against and the merge takes. */
  entries: Map<string, CatalogEntry>;
  /** Per id seen, the record in force: an entry's or a deletion's. */
  heads: Map<string, Head>;
  /** Per id, the keys of its records not in force (replaced, or lost a race) and not yet cleared. */
  stale: Map<string, Set<string>>;
}

/** What `applyRecord` did with a record: made it the id's record in force, left it out, or cleared a key. */
export type Verdict = 'applied' | 'ignored' | 'cleared';

export function emptyCatalogState(): CatalogState {
  return { entries: new Map(), heads: new Map(), stale: new Map() };
}

function markStale(state: CatalogState, id: string, key: string): void {
  const keys = state.stale.get(id);
  if (keys === undefined) state.stale.set(id, new Set([key]));
  else keys.add(key);
}

function unmarkStale(state: CatalogState, id: string, key: string): void {
  const keys = state.stale.get(id);
  if (keys?.delete(key) && keys.size === 0) state.stale.delete(id);
}

/**
 * The apply rule. A change (an entry or a deletion) of id X at version v is applied when v is
 * greater than the version of X's record in force, or X has none: it becomes X's record in force,
 * and the one it replaces is stale. Any other change is ignored (and stale). A null value clears
 * its key: a stale key is forgotten; the key in force takes X out of the state altogether, as
 * compaction takes it out of the topic.
 *
 * Writers write version (version they read) + 1 and read the topic in order, so in the whole log
 * "greater" is exactly "one more": of two writers that read the same version, the first in the log
 * wins and the other is ignored. "Greater" rather than "one more" keeps the rule true where
 * compaction removed the versions between.
 */
export function applyRecord(state: CatalogState, parsed: ParsedRecord): Verdict {
  if (parsed.kind === 'cleared') {
    if (state.heads.get(parsed.id)?.key === parsed.key) {
      state.heads.delete(parsed.id);
      state.entries.delete(parsed.id);
    }
    unmarkStale(state, parsed.id, parsed.key);
    return 'cleared';
  }
  const id = parsed.kind === 'entry' ? parsed.entry.id : parsed.mark.id;
  const version = parsed.kind === 'entry' ? parsed.entry.version : parsed.mark.version;
  const head = state.heads.get(id);
  if (head?.key === parsed.key) return 'applied';
  if (head !== undefined && version <= head.version) {
    markStale(state, id, parsed.key);
    return 'ignored';
  }
  if (head !== undefined) markStale(state, id, head.key);
  state.heads.set(id, { version, key: parsed.key });
  if (parsed.kind === 'entry') state.entries.set(id, parsed.entry);
  else state.entries.delete(id);
  return 'applied';
}
