import { type Keyring, KeyringError } from '@sluice/secret-keyring';
import { applyRecord, emptyCatalogState, held, type Verdict } from './catalog-state.ts';
import type { Catalog } from './change-basics.ts';
import type { PastDeletion } from './envelope.ts';
import { CatalogRecordError, CatalogTimeoutError } from './errors.ts';
import { type CatalogEntry, parseRecord, type RawCatalogRecord } from './record.ts';
import { nameOf, nameOfKey, type RecordKind, type Subject, subjectOfKey } from './record-key.ts';
import type { SourceEntry } from './source-record.ts';
import type { TokenEntry } from './token-record.ts';

/** A record of the catalog topic with its offset (the topic has one partition). */
export interface OffsetRecord extends RawCatalogRecord {
  offset: number;
}

/** A destination or a source that changed: as it now is, or undefined when it was deleted (or cleared). */
export type CatalogChange =
  | { kind: 'destination'; id: string; offset: number; entry: CatalogEntry | undefined }
  | { kind: 'source'; id: string; offset: number; entry: SourceEntry | undefined }
  | { kind: 'token'; id: string; offset: number; entry: TokenEntry | undefined };

/** What became of one record a writer waits for; `unreadable` when it could not be parsed. */
export type TrackedVerdict = Verdict | 'unreadable';

/** A writer's watch on the record it is about to write, registered before the write so none is missed. */
export interface RecordTrack {
  readonly verdict: TrackedVerdict | undefined;
  release(): void;
}

export interface CatalogFollowerOptions {
  keyring: Keyring;
  /** A record that cannot be read: skipped alike by every reader (same keyring), reported here. */
  onUnreadable: (error: CatalogRecordError, offset: number) => void;
}

/**
 * The catalog as read so far, record by record in offset order (`applyRecord`), and what waits on
 * it: change listeners, writers waiting for an offset, the verdicts of records they wrote. No
 * Kafka here: `startCatalogReader` feeds it.
 */
export class CatalogFollower {
  readonly #state = emptyCatalogState();
  readonly #catalog: Catalog = {
    destinations: this.#state.destinations,
    sources: this.#state.sources,
    tokens: this.#state.tokens,
  };
  readonly #options: CatalogFollowerOptions;
  readonly #listeners = new Set<(change: CatalogChange) => void>();
  readonly #waiters = new Set<{ offset: number; resolve: () => void }>();
  readonly #tracks = new Map<string, { verdict: TrackedVerdict | undefined }>();
  /**
   * Per name (a destination's id), the newest record read whose secrets the keyring could not
   * decrypt, until a later record of that name is applied or its key is cleared: at most one entry
   * per name in the catalog.
   */
  readonly #undecryptable = new Map<string, CatalogRecordError>();
  #next = 0;

  constructor(options: CatalogFollowerOptions) {
    this.#options = options;
  }

  /** The offset after the last record read (0 before any): a record at offset o is applied once this is above o. */
  get appliedOffset(): number {
    return this.#next;
  }

  /** The destinations and sources in force (kept current as records are read). */
  current(): Catalog {
    return this.#catalog;
  }

  /**
   * The version of the record in force (a deletion's too) of a name (`nameOf`: a destination's id,
   * `source:<id>` for a source), 0 when it has none.
   */
  versionOf(name: string): number {
    return this.#state.heads.get(name)?.version ?? 0;
  }

  /**
   * A subject's last deletion when its record in force is one (none of the name is in force): its
   * version, and the tenant it was deleted from; undefined otherwise.
   */
  deletionOf(subject: Subject): PastDeletion | undefined {
    if (held(this.#state, subject.kind).has(subject.id)) return undefined;
    const head = this.#state.heads.get(nameOf(subject));
    if (head === undefined) return undefined;
    return { version: head.version, ...(head.deletedFrom !== undefined && { tenant: head.deletedFrom }) };
  }

  /**
   * The ids of `kind` whose record in force is a deletion from `tenant`: what that tenant's audit
   * lists still cover. One pass over the names read.
   */
  deletedIn(query: { kind: RecordKind; tenant: string }): string[] {
    const ids: string[] = [];
    for (const head of this.#state.heads.values()) {
      if (head.deletedFrom !== query.tenant) continue;
      const subject = subjectOfKey(head.key);
      if (subject?.kind === query.kind) ids.push(subject.id);
    }
    return ids;
  }

  /**
   * The records the keyring cannot decrypt that nothing read after them replaced: read with keys
   * other than those that wrote them (`startCatalogReader` refuses to start on any).
   */
  get undecryptable(): readonly CatalogRecordError[] {
    return [...this.#undecryptable.values()];
  }

  /** The keys of a name's records no longer in force and not cleared yet. */
  staleKeys(name: string): readonly string[] {
    return [...(this.#state.stale.get(name) ?? [])];
  }

  /** Calls `listener` for each change of a destination or source read from now on; returns what stops it. */
  onChange(listener: (change: CatalogChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Watches the record of `key` (a key just made for a record not written yet). */
  track(key: string): RecordTrack {
    const held = { verdict: undefined as TrackedVerdict | undefined };
    this.#tracks.set(key, held);
    return {
      get verdict() {
        return held.verdict;
      },
      release: () => this.#tracks.delete(key),
    };
  }

  /** Resolves once the record at `offset` is read; rejects with `CatalogTimeoutError` after `timeoutMs`. */
  waitForOffset(offset: number, timeoutMs: number): Promise<void> {
    if (this.#next > offset) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter = {
        offset,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new CatalogTimeoutError(offset, timeoutMs));
      }, timeoutMs);
      this.#waiters.add(waiter);
    });
  }

  /** Applies one record; a record before the offset already read (the consumer read again from the start) is passed over. */
  read(record: OffsetRecord): void {
    if (record.offset < this.#next) return;
    let verdict: TrackedVerdict;
    let change: CatalogChange | undefined;
    try {
      const parsed = parseRecord(record, this.#options.keyring);
      const name = nameOfKey(parsed.key);
      const before = this.#state.heads.get(name);
      verdict = applyRecord(this.#state, parsed);
      if (verdict === 'applied' || (parsed.kind === 'cleared' && this.#undecryptable.get(name)?.key === parsed.key))
        this.#undecryptable.delete(name);
      if (verdict === 'applied' || before !== this.#state.heads.get(name))
        change = this.#changeOf(parsed.key, record.offset);
    } catch (err) {
      if (!(err instanceof CatalogRecordError)) throw err;
      if (err.cause instanceof KeyringError) this.#undecryptable.set(nameOfKey(err.key), err);
      this.#options.onUnreadable(err, record.offset);
      verdict = 'unreadable';
    }
    const key = record.key === null ? undefined : record.key.toString();
    const track = key === undefined ? undefined : this.#tracks.get(key);
    if (track !== undefined && track.verdict === undefined) track.verdict = verdict;
    this.advanceTo(record.offset + 1);
    if (change !== undefined) for (const listener of this.#listeners) listener(change);
  }

  /** What a record of `key` at `offset` changed: its destination or source as now in force. */
  #changeOf(key: string, offset: number): CatalogChange {
    const { kind, id } = subjectOfKey(key)!;
    if (kind === 'source') return { kind, id, offset, entry: this.#state.sources.get(id) };
    if (kind === 'token') return { kind, id, offset, entry: this.#state.tokens.get(id) };
    return { kind, id, offset, entry: this.#state.destinations.get(id) };
  }

  /** Moves past offsets that hold no record any more (compaction removed them). */
  advanceTo(next: number): void {
    if (next <= this.#next) return;
    this.#next = next;
    for (const waiter of this.#waiters)
      if (waiter.offset < next) {
        this.#waiters.delete(waiter);
        waiter.resolve();
      }
  }
}
