import { ConfigError, type Destination, DestinationIds, validateDestination } from '@sluice/config';
import type { Catalog } from './changes.ts';
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
 * The `destinations` services use: the config file's, then the catalog's. An id the file declares
 * is the file's: the runtime one is ignored and reported. A runtime destination the file in force
 * no longer admits (a source removed from it, an id that now matches a file destination's but for
 * `.` and `_`) is ignored and reported with the field and problem, the others still apply. Routing
 * indexes the result by source (`routeEvent` of `@sluice/webhook`).
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
    try {
      destinations.push(validateDestination(catalog.get(id)!.definition, { sourceIds, destinationIds }).destination);
      destinationIds.add(id);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      ignored.push({ id, reason: 'invalid', field: err.field, problem: err.problem });
    }
  }
  return { destinations, ignored };
}
