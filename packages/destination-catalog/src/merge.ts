import { ConfigError, type Destination, DestinationIds, type Source, validateDestination } from '@sluice/config';
import { type Catalog, sourceIdsInForce } from './change-basics.ts';
import type { FileConfig } from './file-config.ts';
import { keysInForce } from './source-record.ts';

/** A runtime source left out of the merge: the file declares its id. */
export type IgnoredSource = { id: string; reason: 'file_declared'; file: string };

/** A runtime destination left out of the merge, and why. */
export type IgnoredDestination =
  | { id: string; reason: 'file_declared'; file: string }
  | { id: string; reason: 'invalid'; field: string; problem: string };

/** Destinations by the id of a source they take events from, each list in the order of `destinations`. */
export type DestinationsBySource = ReadonlyMap<string, readonly Destination[]>;

export interface MergedDestinations {
  /** The file's destinations first, in its order, then the runtime ones by id. */
  destinations: Destination[];
  /** The same destinations by source id: what routing looks up, at a cost that does not grow with their number. */
  bySource: DestinationsBySource;
  ignored: IgnoredDestination[];
}

/** Indexes destinations by source id, keeping their order within each source. */
export function indexBySource(destinations: readonly Destination[]): DestinationsBySource {
  const index = new Map<string, Destination[]>();
  for (const destination of destinations) {
    for (const sourceId of new Set(destination.sourceIds)) {
      const list = index.get(sourceId);
      if (list === undefined) index.set(sourceId, [destination]);
      else list.push(destination);
    }
  }
  return index;
}

/**
 * The `sources` services use: the config file's, in its order, then the catalog's by id, each with
 * the digests of its write keys in force (`writeKeyDigests`; `writeKeys` empty: the catalog holds no
 * key). An id the file declares is the file's: the runtime one is ignored and reported. With no
 * runtime source, the file's list itself.
 */
export function mergeSources(file: FileConfig, catalog: Catalog): { sources: Source[]; ignored: IgnoredSource[] } {
  if (catalog.sources.size === 0) return { sources: file.config.sources, ignored: [] };
  const sources: Source[] = [...file.config.sources];
  const ignored: IgnoredSource[] = [];
  const fileIds = new Set(file.config.sources.map((s) => s.id));
  for (const id of [...catalog.sources.keys()].sort()) {
    if (fileIds.has(id)) {
      ignored.push({ id, reason: 'file_declared', file: file.path });
      continue;
    }
    const { definition } = catalog.sources.get(id)!;
    sources.push({
      id,
      name: definition.name,
      writeKeys: [],
      writeKeyDigests: keysInForce(definition).map((k) => k.hash),
    });
  }
  return { sources, ignored };
}

/**
 * The `destinations` services use: the config file's, then the catalog's. An id the file declares
 * is the file's: the runtime one is ignored and reported. A runtime destination may name the
 * sources in force, the file's and the runtime ones; one the config in force no longer admits (its
 * source removed, an id that now matches a file destination's but for `.` and `_`) is ignored and
 * reported with the field and problem, the others still apply.
 */
export function mergeDestinations(file: FileConfig, catalog: Catalog): MergedDestinations {
  const destinations: Destination[] = [...file.config.destinations];
  const ignored: IgnoredDestination[] = [];
  const fileIds = new Set(file.config.destinations.map((d) => d.id));
  // Built once and added to: each runtime destination costs a lookup, not a pass over the others.
  const sourceIds: ReadonlySet<string> = sourceIdsInForce(file, catalog);
  const destinationIds = new DestinationIds(fileIds);
  for (const id of [...catalog.destinations.keys()].sort()) {
    if (fileIds.has(id)) {
      ignored.push({ id, reason: 'file_declared', file: file.path });
      continue;
    }
    try {
      const { definition } = catalog.destinations.get(id)!;
      destinations.push(validateDestination(definition, { sourceIds, destinationIds }).destination);
      destinationIds.add(id);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      ignored.push({ id, reason: 'invalid', field: err.field, problem: err.problem });
    }
  }
  return { destinations, bySource: indexBySource(destinations), ignored };
}
