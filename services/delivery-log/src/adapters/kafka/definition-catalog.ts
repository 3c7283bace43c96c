import { type Catalog, type CatalogReader, CatalogWriter, type FileConfig } from '@sluice/destination-catalog';
import { SafeProducer } from '@sluice/kafka';
import type { Keyring } from '@sluice/secret-keyring';
import { type RuntimeDestinationsStart, startRuntimeDestinations } from '@sluice/service-kit';

/** The config file in force and, when on, the catalog as the API reads it, its writer, and the keyring portal links are signed with. */
export interface DefinitionCatalog {
  file: () => FileConfig;
  catalog: { current: () => Catalog; writer: CatalogWriter; deletedIn: CatalogReader['deletedIn'] } | undefined;
  keyring: Keyring | undefined;
}

/**
 * What the definitions API reads and writes (docs/reference/runtime-destinations.md, "API";
 * docs/reference/runtime-sources.md, "API"): the config file in force and, when
 * `runtimeDestinations` is configured, the catalog, read to its end and laid over the service's
 * config (so the log routes events to runtime destinations too), and its writer, for destinations
 * and sources. Off: the file only, and the write routes answer 409.
 */
export async function startDefinitionCatalog(start: RuntimeDestinationsStart): Promise<DefinitionCatalog> {
  const { ctx, life, kafka } = start;
  const file = (): FileConfig => ({ path: ctx.config.path ?? '(the config given at start)', config: ctx.config.file });
  const runtime = await startRuntimeDestinations(start);
  if (runtime === undefined) return { file, catalog: undefined, keyring: undefined };
  const producer = await life.producer(new SafeProducer(kafka), 'catalog producer');
  const writer = new CatalogWriter({
    reader: runtime.reader,
    producer,
    topic: ctx.config.current.kafka.topics.destinations,
    context: () => ({ file: file(), keyring: runtime.keyring }),
    logger: ctx.logger,
  });
  const { reader } = runtime;
  const catalog = { current: () => reader.current(), writer, deletedIn: reader.deletedIn };
  return { file, catalog, keyring: runtime.keyring };
}
