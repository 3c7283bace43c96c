import { ConfigError, type Destination, DestinationIds, type Source, validateDestination } from '@sluice/config';
import { type Catalog, sourceIdsInForce } from './change-basics.ts';
import type { CatalogEntry } from './record.ts';
import type { FileConfig } from './file-config.ts';
import { keysInForce } from './source-record.ts';

/** A runtime source left out of the merge: the file declares its id. */
export type IgnoredSource = { id: string; reason: 'file_declared'; file: string };

/** A runtime destination left out of the merge, and why. */
export type IgnoredDestination =
  | { id: string; reason: 'file_declared'; file: string }
  | { id: string; reason: 'invalid'; field: string; problem: string };

export interface MergedDestinations {
  /** The file's destinations first, in its order, then the runtime ones by id. */
  destinations: Destination[];
  ignored: IgnoredDestination[];
}

/**
 * A runtime destination resolved against the sources in force: the same result as long as its
 * catalog entry (replaced by every change) and those sources (`sourcesKey`, their ids and tenants) are the
 * same. The id's clash with other ids is checked at each merge (the others change).
 */
interface Resolved {
  sourcesKey: string;
  destination: Destination | undefined;
}
const resolvedEntries = new WeakMap<CatalogEntry, Resolved>();

/** The entry's destination when it passes the config's rules but the id check, else undefined. */
function resolvedAgainst(
  entry: CatalogEntry,
  sources: { sourceIds: ReadonlyMap<string, string>; sourcesKey: string },
): Destination | undefined {
  const cached = resolvedEntries.get(entry);
  if (cached?.sourcesKey === sources.sourcesKey) return cached.destination;
  let destination: Destination | undefined;
  try {
    destination = validateDestination(entry.definition, { sourceIds: sources.sourceIds }).destination;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
  }
  resolvedEntries.set(entry, { sourcesKey: sources.sourcesKey, destination });
  return destination;
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
      tenant: definition.tenant,
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
 * reported with the field and problem, the others still apply. Each entry is resolved once per
 * entry and set of sources in force (a change of it, a reload, a source created or deleted), so a
 * merge after one change costs a lookup and an id check per runtime destination, not its
 * validation. Routing indexes the result by source (`routeEvent` of `@sluice/webhook`).
 */
export function mergeDestinations(file: FileConfig, catalog: Catalog): MergedDestinations {
  const destinations: Destination[] = [...file.config.destinations];
  const ignored: IgnoredDestination[] = [];
  const fileIds = new Set(file.config.destinations.map((d) => d.id));
  // Built once and added to: each runtime destination costs a lookup, not a pass over the others.
  const sourceIds: ReadonlyMap<string, string> = sourceIdsInForce(file, catalog);
  const sourcesKey = [...sourceIds].map(([id, tenant]) => `${id} ${tenant}`).join('\n');
  const destinationIds = new DestinationIds(fileIds);
  for (const id of [...catalog.destinations.keys()].sort()) {
    if (fileIds.has(id)) {
      ignored.push({ id, reason: 'file_declared', file: file.path });
      continue;
    }
    const entry = catalog.destinations.get(id)!;
    const resolved = resolvedAgainst(entry, { sourceIds, sourcesKey });
    try {
      if (resolved === undefined) {
        // Refused: validated again whole, so the problem reported is the one the file's rules name first.
        validateDestination(entry.definition, { sourceIds, destinationIds });
        throw new Error(`destination ${id} passed its whole validation after failing part of it`);
      }
      destinationIds.check('id', id);
      destinations.push(resolved);
      destinationIds.add(id);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      ignored.push({ id, reason: 'invalid', field: err.field, problem: err.problem });
    }
  }
  return { destinations, ignored };
}
