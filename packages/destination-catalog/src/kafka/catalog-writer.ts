import type { SafeProducer } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import {
  type Catalog,
  type CatalogContext,
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
  type VersionedRequest,
} from '../changes.ts';
import { CatalogUnreadError } from '../errors.ts';
import { clearingRecord } from '../record.ts';
import { isObject } from '../secret-fields.ts';
import type { CatalogReader } from './catalog-reader.ts';

/** What the writer needs of its process's reader: what it read, and where it is. */
export type CatalogView = Pick<CatalogReader, 'current' | 'versionOf' | 'staleKeys' | 'waitForOffset' | 'track'>;

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

/** A pure change of the catalog (`createDestination` …), its request bound. */
type Change = (catalog: Catalog, context: CatalogContext) => CatalogOutcome;

/**
 * Makes the changes of the catalog with compare-and-set semantics on its one partition
 * (docs/reference/runtime-destinations.md, "Writing"): checks the change on what its reader has
 * read, writes the record, waits for the reader to read past it and answers by what the apply rule
 * made of it: the written outcome when it is in force, `version_conflict` (412) when another change
 * of the destination came first. Then it clears, in one batch, the destination's records no longer
 * in force.
 */
export class CatalogWriter {
  readonly #options: CatalogWriterOptions;

  constructor(options: CatalogWriterOptions) {
    this.#options = options;
  }

  create(request: CreateRequest): Promise<CatalogOutcome> {
    const id = isObject(request.definition) ? request.definition.id : undefined;
    const reader = this.#options.reader;
    // A destination deleted under the id: the new one goes on from the deletion's version.
    const deleted = typeof id === 'string' && !reader.current().has(id) ? reader.versionOf(id) : 0;
    return this.#perform((catalog, context) =>
      createDestination(catalog, { deletedVersion: deleted, ...request }, context),
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

  async #perform(change: Change): Promise<CatalogOutcome> {
    const { reader, producer, topic } = this.#options;
    const outcome = change(reader.current(), this.#options.context());
    if (!('record' in outcome)) return outcome;
    const [id, version] =
      outcome.kind === 'deleted' ? [outcome.id, outcome.version] : [outcome.entry.id, outcome.entry.version];
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
    await this.#clearStale(id);
    if (verdict === 'applied') return outcome;
    if (verdict !== 'ignored') throw new CatalogUnreadError(outcome.record.key);
    return { kind: 'version_conflict', id, expectedVersion: version - 1, currentVersion: reader.versionOf(id) };
  }

  /**
   * Clears the destination's records no longer in force, as the reader knows them, in one batch:
   * compaction removes all of them or none, which keeps every reader's state the same
   * (docs/reference/runtime-destinations.md, "Compaction").
   */
  async #clearStale(id: string): Promise<void> {
    const keys = this.#options.reader.staleKeys(id);
    if (keys.length === 0) return;
    try {
      await this.#options.producer.send(this.#options.topic, keys.map(clearingRecord));
    } catch (err) {
      this.#options.logger?.warn({ id, keys: keys.length, err }, 'clearing stale catalog records failed');
    }
  }
}
