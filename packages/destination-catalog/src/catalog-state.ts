import type { CatalogEntry, ParsedRecord } from './record.ts';
import { nameOfKey, type RecordKind, subjectOfKey } from './record-key.ts';
import type { SourceEntry } from './source-record.ts';
import type { TokenEntry } from './token-record.ts';

/** The record in force for a name: its version (a deletion's too), its key, and a deletion's tenant. */
export interface Head {
  version: number;
  key: string;
  /** The tenant of what a deletion in force deleted, when it names one: only that tenant may create under the name again. */
  deletedFrom?: string;
}

/**
 * The catalog as its topic says, record by record (docs/reference/runtime-destinations.md, "Apply
 * rule"). Every reader folds the one partition in the same order with `applyRecord`, so every
 * reader holds the same state at the same offset. Destinations and sources follow the one rule,
 * each by its record name (`nameOf`: a destination's id, `source:` and a source's id).
 */
export interface CatalogState {
  /** The runtime destinations in force, by id. */
  destinations: Map<string, CatalogEntry>;
  /** The runtime sources in force, by id. */
  sources: Map<string, SourceEntry>;
  /** The tenant tokens in force, by id. */
  tokens: Map<string, TokenEntry>;
  /** Per name seen, the record in force: an entry's or a deletion's. */
  heads: Map<string, Head>;
  /** Per name, the keys of its records not in force (replaced, or lost a race) and not yet cleared. */
  stale: Map<string, Set<string>>;
}

/** What `applyRecord` did with a record: made it the name's record in force, left it out, or cleared a key. */
export type Verdict = 'applied' | 'ignored' | 'cleared';

export function emptyCatalogState(): CatalogState {
  return { destinations: new Map(), sources: new Map(), tokens: new Map(), heads: new Map(), stale: new Map() };
}

function markStale(state: CatalogState, name: string, key: string): void {
  const keys = state.stale.get(name);
  if (keys === undefined) state.stale.set(name, new Set([key]));
  else keys.add(key);
}

function unmarkStale(state: CatalogState, name: string, key: string): void {
  const keys = state.stale.get(name);
  if (keys?.delete(key) && keys.size === 0) state.stale.delete(name);
}

/** What is in force of each kind of record, by id. */
export const held = (state: CatalogState, kind: RecordKind): Map<string, unknown> =>
  kind === 'source' ? state.sources : kind === 'token' ? state.tokens : state.destinations;

/** Takes the destination, source or token a key names out of what is in force. */
function drop(state: CatalogState, key: string): void {
  const subject = subjectOfKey(key)!;
  held(state, subject.kind).delete(subject.id);
}

/**
 * The apply rule. A change (an entry or a deletion) of name X at version v is applied when v is
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
  const name = nameOfKey(parsed.key);
  if (parsed.kind === 'cleared') {
    if (state.heads.get(name)?.key === parsed.key) {
      state.heads.delete(name);
      drop(state, parsed.key);
    }
    unmarkStale(state, name, parsed.key);
    return 'cleared';
  }
  const version = parsed.kind === 'deleted' ? parsed.mark.version : parsed.entry.version;
  const head = state.heads.get(name);
  if (head?.key === parsed.key) return 'applied';
  if (head !== undefined && version <= head.version) {
    markStale(state, name, parsed.key);
    return 'ignored';
  }
  if (head !== undefined) markStale(state, name, head.key);
  const deletedFrom = parsed.kind === 'deleted' ? parsed.mark.tenant : undefined;
  state.heads.set(name, { version, key: parsed.key, ...(deletedFrom !== undefined && { deletedFrom }) });
  if (parsed.kind === 'entry') state.destinations.set(parsed.entry.id, parsed.entry);
  else if (parsed.kind === 'source') state.sources.set(parsed.entry.id, parsed.entry);
  else if (parsed.kind === 'token') state.tokens.set(parsed.entry.id, parsed.entry);
  else drop(state, parsed.key);
  return 'applied';
}
