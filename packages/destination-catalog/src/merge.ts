import { ConfigError, type Destination, DestinationIds, validateDestination } from '@sluice/config';
import type { Catalog } from './changes.ts';
import type { CatalogEntry } from './record.ts';
import type { FileConfig } from './file-config.ts';

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
 * A runtime destination resolved against the file's sources: the same result as long as its
 * catalog entry (replaced by every change) and those sources (replaced by every reload) are the
 * same objects. The id's clash with other ids is checked at each merge (the others change).
 */
interface Resolved {
  sources: FileConfig['config']['sources'];
  destination: Destination | undefined;
}
const resolvedEntries = new WeakMap<CatalogEntry, Resolved>();

/** The entry's destination when it passes the file's rules but the id check, else undefined. */
function resolvedAgainst(
  entry: CatalogEntry,
  file: FileConfig,
  sourceIds: ReadonlySet<string>,
): Destination | undefined {
  const sources = file.config.sources;
  const cached = resolvedEntries.get(entry);
  if (cached?.sources === sources) return cached.destination;
  let destination: Destination | undefined;
  try {
    destination = validateDestination(entry.definition, { sourceIds }).destination;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
  }
  resolvedEntries.set(entry, { sources, destination });
  return destination;
}

/**
 * The `destinations` services use: the config file's, then the catalog's. An id the file declares
 * is the file's: the runtime one is ignored and reported. A runtime destination the file in force
 * no longer admits (a source removed from it, an id that now matches a file destination's but for
 * `.` and `_`) is ignored and reported with the field and problem, the others still apply. Each
 * entry is resolved once per entry and file (a change or a reload), so a merge after one change
 * costs a lookup and an id check per runtime destination, not its validation. Routing indexes the
 * result by source (`routeEvent` of `@sluice/webhook`).
 */
export function mergeDestinations(file: FileConfig, catalog: Catalog): MergedDestinations {
  const destinations: Destination[] = [...file.config.destinations];
  const ignored: IgnoredDestination[] = [];
  const fileIds = new Set(file.config.destinations.map((d) => d.id));
  // Built once and added to: each runtime destination costs a lookup, not a pass over the others.
  const sourceIds: ReadonlySet<string> = new Set(file.config.sources.map((s) => s.id));
  const destinationIds = new DestinationIds(fileIds);
  for (const id of [...catalog.keys()].sort()) {
    if (fileIds.has(id)) {
      ignored.push({ id, reason: 'file_declared', file: file.path });
      continue;
    }
    const entry = catalog.get(id)!;
    const resolved = resolvedAgainst(entry, file, sourceIds);
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
