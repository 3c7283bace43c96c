import type { SafeProducer } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import type { Catalog, CatalogContext, Refusal, VersionedRequest } from '../change-basics.ts';
import {
  type CatalogOutcome,
  type CreateRequest,
  createDestination,
  deleteDestination,
  type PatchRequest,
  patchDestination,
  type ReplaceRequest,
  type RotateRequest,
  replaceDestination,
  rotateSecret,
} from '../changes.ts';
import { CatalogUnreadError } from '../errors.ts';
import { clearingRecord } from '../record.ts';
import { nameOfKey, subjectOfKey } from '../record-key.ts';
import { isObject } from '../secret-fields.ts';
import {
  type CreateSourceRequest,
  createSource,
  deleteSource,
  mintWriteKey,
  type RenameSourceRequest,
  type RevokeWriteKeyRequest,
  renameSource,
  revokeWriteKey,
  type SourceOutcome,
} from '../source-changes.ts';
import {
  type CreateTokenRequest,
  createToken,
  type RevokeTokenRequest,
  revokeToken,
  type TokenOutcome,
} from '../token-changes.ts';
import type { CatalogReader } from './catalog-reader.ts';

/** What the writer needs of its process's reader: what it read, and where it is. */
export type CatalogView = Pick<
  CatalogReader,
  'current' | 'versionOf' | 'deletionOf' | 'staleKeys' | 'waitForOffset' | 'track'
>;

/** What the writer sends with: the one producer preset, whose answer gives the offset written. */
export type CatalogProducer = Pick<SafeProducer, 'send'>;

export interface CatalogWriterOptions {
  reader: CatalogView;
  producer: CatalogProducer;
  /** The catalog topic (`kafka.topics.destinations`). */
  topic: string;
  /** The config file in force and the keyring, asked at each change (the file can be reloaded). */
  context: () => CatalogContext;
  /** How long a change waits for the reader to read it back; default 10 s (then `CatalogTimeoutError`). */
  timeoutMs?: number;
  /** Where a failed clearing of stale records is logged (the next change of the destination clears them). */
  logger?: Logger;
}

/** A pure change of the catalog (`createDestination`, `createSource` …), its request bound. */
type Change<O> = (catalog: Catalog, context: CatalogContext) => O;

/**
 * Makes the changes of the catalog — of destinations and of sources alike — with compare-and-set
 * semantics on its one partition (docs/reference/runtime-destinations.md, "Writing"): checks the
 * change on what its reader has read, writes the record, waits for the reader to read past it and
 * answers by what the apply rule made of it: the written outcome when it is in force,
 * `version_conflict` (412) when another change of the same destination or source came first. Then
 * it clears, in one batch, that one's records no longer in force.
 */
export class CatalogWriter {
  readonly #options: CatalogWriterOptions;

  constructor(options: CatalogWriterOptions) {
    this.#options = options;
  }

  create(request: CreateRequest): Promise<CatalogOutcome> {
    const id = isObject(request.definition) ? request.definition.id : undefined;
    const deleted = typeof id === 'string' ? this.#options.reader.deletionOf({ kind: 'destination', id }) : undefined;
    return this.#perform((catalog, context) =>
      createDestination(catalog, { ...(deleted && { deleted }), ...request }, context),
    );
  }

  replace(request: ReplaceRequest): Promise<CatalogOutcome> {
    return this.#perform((catalog, context) => replaceDestination(catalog, request, context));
  }

  patch(request: PatchRequest): Promise<CatalogOutcome> {
    return this.#perform((catalog, context) => patchDestination(catalog, request, context));
  }

  delete(request: VersionedRequest): Promise<CatalogOutcome> {
    return this.#perform((catalog, context) => deleteDestination(catalog, request, context));
  }

  rotate(request: RotateRequest): Promise<CatalogOutcome> {
    return this.#perform((catalog, context) => rotateSecret(catalog, request, context));
  }

  createSource(request: CreateSourceRequest): Promise<SourceOutcome> {
    const id = isObject(request.source) ? request.source.id : undefined;
    const deleted = typeof id === 'string' ? this.#options.reader.deletionOf({ kind: 'source', id }) : undefined;
    return this.#perform((catalog, context) =>
      createSource(catalog, { ...(deleted && { deleted }), ...request }, context),
    );
  }

  renameSource(request: RenameSourceRequest): Promise<SourceOutcome> {
    return this.#perform((catalog, context) => renameSource(catalog, request, context));
  }

  deleteSource(request: VersionedRequest): Promise<SourceOutcome> {
    return this.#perform((catalog, context) => deleteSource(catalog, request, context));
  }

  mintWriteKey(request: VersionedRequest): Promise<SourceOutcome> {
    return this.#perform((catalog, context) => mintWriteKey(catalog, request, context));
  }

  revokeWriteKey(request: RevokeWriteKeyRequest): Promise<SourceOutcome> {
    return this.#perform((catalog, context) => revokeWriteKey(catalog, request, context));
  }

  createToken(request: CreateTokenRequest): Promise<TokenOutcome> {
    return this.#perform((catalog) => createToken(catalog, request));
  }

  revokeToken(request: RevokeTokenRequest): Promise<TokenOutcome> {
    return this.#perform((catalog) => revokeToken(catalog, request));
  }

  async #perform<O extends CatalogOutcome | SourceOutcome | TokenOutcome>(change: Change<O>): Promise<O | Refusal> {
    const { reader, producer, topic } = this.#options;
    const outcome = change(reader.current(), this.#options.context());
    if (!('record' in outcome)) return outcome;
    const name = nameOfKey(outcome.record.key);
    const version = 'entry' in outcome ? outcome.entry.version : outcome.version;
    const track = reader.track(outcome.record.key);
    let verdict: typeof track.verdict;
    try {
      const [written] = await producer.send(topic, [outcome.record]);
      if (written?.baseOffset === undefined) throw new CatalogUnreadError(outcome.record.key);
      await reader.waitForOffset(Number(written.baseOffset), this.#options.timeoutMs ?? 10_000);
      verdict = track.verdict;
    } finally {
      track.release();
    }
    await this.#clearStale(name);
    if (verdict === 'applied') return outcome;
    if (verdict !== 'ignored') throw new CatalogUnreadError(outcome.record.key);
    const { id } = subjectOfKey(outcome.record.key)!;
    return { kind: 'version_conflict', id, expectedVersion: version - 1, currentVersion: reader.versionOf(name) };
  }

  /**
   * Clears the records of a name (a destination's or a source's) no longer in force, as the reader
   * knows them, in one batch: compaction removes all of them or none, which keeps every reader's
   * state the same (docs/reference/runtime-destinations.md, "Compaction").
   */
  async #clearStale(name: string): Promise<void> {
    const keys = this.#options.reader.staleKeys(name);
    if (keys.length === 0) return;
    try {
      await this.#options.producer.send(this.#options.topic, keys.map(clearingRecord));
    } catch (err) {
      this.#options.logger?.warn({ name, keys: keys.length, err }, 'clearing stale catalog records failed');
    }
  }
}
