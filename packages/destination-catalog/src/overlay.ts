import type { ConfigLayer, ConfigStore, SluiceConfig } from '@sluice/config';
import type { Logger } from '@sluice/logging';
import type { Catalog } from './change-basics.ts';
import type { CatalogReader } from './kafka/catalog-reader.ts';
import { type IgnoredDestination, type IgnoredSource, mergeDestinations, mergeSources } from './merge.ts';
import type { RecordKind } from './record-key.ts';

/** The config file in force, whole: what the services read, and where it is (reports name it). */
export interface FileInForce {
  path: string;
  config: SluiceConfig;
}

/** The config in force with the runtime destinations and sources, and those left out of it. */
export interface EffectiveConfig {
  config: SluiceConfig;
  ignored: IgnoredDestination[];
  ignoredSources: IgnoredSource[];
}

/**
 * The config the services use: the file's, its sources and destinations merged with the
 * catalog's (`mergeSources`, `mergeDestinations`: the file's first, then the runtime ones by id).
 * Nothing else changes.
 */
export function effectiveConfig(file: FileInForce, catalog: Catalog): EffectiveConfig {
  const { sources, ignored: ignoredSources } = mergeSources(file, catalog);
  const { destinations, ignored } = mergeDestinations(file, catalog);
  return { config: { ...file.config, sources, destinations }, ignored, ignoredSources };
}

/** An ignored runtime destination or source as a report names it: its id and why, never a value of its definition. */
const reasonOf = (ignored: IgnoredDestination | IgnoredSource) =>
  ignored.reason === 'file_declared' ? `file_declared ${ignored.file}` : `${ignored.field}: ${ignored.problem}`;

/**
 * Which ignored runtime destinations (or sources: one instance per kind) to report: each once,
 * while it stays ignored for the same reason. Every merge hands over all it ignored (a merge runs
 * on every change of the catalog and every reload of the file), so a destination ignored for an
 * hour is reported once, not per merge; once it applies again, or is ignored for another reason,
 * it is reported anew. Holds one reason per id ignored now, no more.
 */
export class IgnoredReports<T extends IgnoredDestination | IgnoredSource = IgnoredDestination> {
  readonly #reported = new Map<string, string>();

  /** The destinations of `ignored` not reported yet for their reason; forgets those no longer ignored. */
  fresh(ignored: readonly T[]): T[] {
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
  /** Told of each runtime destination or source newly ignored (`IgnoredReports`), and which kind it is. */
  onIgnored: (ignored: IgnoredDestination | IgnoredSource, kind: RecordKind) => void;
}

/**
 * The layer a `ConfigStore` lays over the file's config for the runtime destinations and sources:
 * each config the file gives (at start, at each reload) merged with the catalog in force. The store
 * runs it again (`refresh`) when the catalog changes.
 */
export function catalogLayer(options: CatalogLayerOptions): ConfigLayer {
  const reports = new IgnoredReports();
  const sourceReports = new IgnoredReports<IgnoredSource>();
  return (config) => {
    const merged = effectiveConfig({ path: options.path, config }, options.catalog());
    for (const ignored of sourceReports.fresh(merged.ignoredSources)) options.onIgnored(ignored, 'source');
    for (const ignored of reports.fresh(merged.ignored)) options.onIgnored(ignored, 'destination');
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
 * Runtime destinations and sources in force in a service (docs/reference/runtime-destinations.md,
 * "In the services"): lays the catalog over the file's config in `store` (throws, changing nothing,
 * when that config cannot be put in force), and merges again on every change the reader reads, by
 * the path a reload takes (a merge that cannot be put in force is reported, and the config before
 * it stays). A reload of the file merges with the catalog in force. Each runtime destination or
 * source the merge ignores is logged once, by id and reason. Returns what stops following the catalog.
 */
export function layCatalog(overlay: CatalogOverlay): () => void {
  const { store, reader, logger } = overlay;
  store.lay(
    catalogLayer({
      catalog: () => reader.current(),
      path: store.path ?? '(the config given at start)',
      onIgnored: (ignored, kind) => logger.warn(ignored, `runtime ${kind} ignored`),
    }),
  );
  return reader.onChange(() => store.refresh());
}
