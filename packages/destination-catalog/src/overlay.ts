import type { ConfigLayer, ConfigStore, SluiceConfig } from '@sluice/config';
import type { Logger } from '@sluice/logging';
import type { Catalog } from './changes.ts';
import type { CatalogReader } from './kafka/catalog-reader.ts';
import { type IgnoredDestination, mergeDestinations } from './merge.ts';

/** The config file in force, whole: what the services read, and where it is (reports name it). */
export interface FileInForce {
  path: string;
  config: SluiceConfig;
}

/** The config in force with runtime destinations, and the runtime destinations left out of it. */
export interface EffectiveConfig {
  config: SluiceConfig;
  ignored: IgnoredDestination[];
}

/**
 * The config the services use: the file's, its destinations merged with the catalog's
 * (`mergeDestinations`: the file's first, then the runtime ones by id). Nothing else changes.
 */
export function effectiveConfig(file: FileInForce, catalog: Catalog): EffectiveConfig {
  const { destinations, ignored } = mergeDestinations(file, catalog);
  return { config: { ...file.config, destinations }, ignored };
}

/** An ignored runtime destination as a report names it: its id and why, never a value of its definition. */
const reasonOf = (ignored: IgnoredDestination) =>
  ignored.reason === 'file_declared' ? `file_declared ${ignored.file}` : `${ignored.field}: ${ignored.problem}`;

/**
 * Which ignored runtime destinations to report: each once, while it stays ignored for the same
 * reason. Every merge hands over all it ignored (a merge runs on every change of the catalog and
 * every reload of the file), so a destination ignored for an hour is reported once, not per merge;
 * once it applies again, or is ignored for another reason, it is reported anew.
 */
export class IgnoredReports {
  readonly #reported = new Map<string, string>();

  /** The destinations of `ignored` not reported yet for their reason; forgets those no longer ignored. */
  fresh(ignored: readonly IgnoredDestination[]): IgnoredDestination[] {
    const now = new Map(ignored.map((d) => [d.id, reasonOf(d)]));
    const fresh = ignored.filter((d) => this.#reported.get(d.id) !== now.get(d.id));
    this.#reported.clear();
    for (const [id, reason] of now) this.#reported.set(id, reason);
    return fresh;
  }
}

export interface CatalogLayerOptions {
  /** The catalog in force (`CatalogReader#current`), read at each merge. */
  catalog: () => Catalog;
  /** The config file's path, named in `file_declared` reports; tests without a file give a label. */
  path: string;
  /** Told of each runtime destination newly ignored (`IgnoredReports`). */
  onIgnored: (ignored: IgnoredDestination) => void;
}

/**
 * The layer a `ConfigStore` lays over the file's config for runtime destinations: each config the
 * file gives (at start, at each reload) merged with the catalog in force. The store runs it again
 * (`refresh`) when the catalog changes.
 */
export function catalogLayer(options: CatalogLayerOptions): ConfigLayer {
  const reports = new IgnoredReports();
  return (config) => {
    const merged = effectiveConfig({ path: options.path, config }, options.catalog());
    for (const ignored of reports.fresh(merged.ignored)) options.onIgnored(ignored);
    return merged.config;
  };
}

/** What `layCatalog` joins: a service's config store, its catalog reader (caught up), and its log. */
export interface CatalogOverlay {
  store: ConfigStore;
  reader: Pick<CatalogReader, 'current' | 'onChange'>;
  logger: Logger;
}

/**
 * Runtime destinations in force in a service (docs/reference/runtime-destinations.md, "In the
 * services"): lays the catalog over the file's config in `store` (throws, changing nothing, when
 * that config cannot be put in force), and merges again on every change the reader reads, by the
 * path a reload takes (a merge that cannot be put in force is reported, and the config before it
 * stays). A reload of the file merges with the catalog in force. Each runtime destination the
 * merge ignores is logged once, by id and reason. Returns what stops following the catalog.
 */
export function layCatalog(overlay: CatalogOverlay): () => void {
  const { store, reader, logger } = overlay;
  store.lay(
    catalogLayer({
      catalog: () => reader.current(),
      path: store.path ?? '(the config given at start)',
      onIgnored: (ignored) => logger.warn(ignored, 'runtime destination ignored'),
    }),
  );
  return reader.onChange(() => store.refresh());
}
