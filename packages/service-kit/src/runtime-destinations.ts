import type { ConfigStore } from '@sluice/config';
import { type CatalogReader, layCatalog, startCatalogReader } from '@sluice/destination-catalog';
import type { Kafka } from '@sluice/kafka';
import type { Keyring } from '@sluice/secret-keyring';
import { Gauge, type Registry } from 'prom-client';
import { runtimeKeyring } from './runtime-keyring.ts';
import type { ServiceContext } from './service-context.ts';
import type { ServiceLifecycle } from './service-lifecycle.ts';

/** What `startRuntimeDestinations` starts with: the service's context, lifecycle and Kafka client. */
export interface RuntimeDestinationsStart {
  ctx: ServiceContext;
  life: ServiceLifecycle;
  kafka: Kafka;
}

/** The catalog on in a service: its reader (caught up, followed) and the keyring it reads with. */
export interface RuntimeCatalog {
  reader: CatalogReader;
  /** What a service that writes the catalog (the delivery log's API) encrypts with. */
  keyring: Keyring;
}

/**
 * Runtime destinations and sources in force in a service (docs/reference/runtime-destinations.md,
 * "In the services"; docs/reference/runtime-sources.md), when the config turns the catalog on
 * (`runtimeDestinations`): the catalog read to its end (through the start-up retry; the service is
 * not ready before), laid over the file's config in `ctx.config` and followed. A destination's
 * topics of its own are created by the deliverer when first needed: its parked topic at its first
 * park, its waiting topic when it is ordered (docs/deliverer.md "Pausing", docs/reference/ordering.md).
 * Off: nothing, and undefined.
 */
export async function startRuntimeDestinations(start: RuntimeDestinationsStart): Promise<RuntimeCatalog | undefined> {
  const { ctx, life, kafka } = start;
  const initial = ctx.config.current;
  const keyring = ctx.keyring ?? runtimeKeyring(ctx.config);
  if (keyring === undefined) return undefined;
  const reader = await life.open(
    'destination catalog',
    () =>
      startCatalogReader({
        kafka,
        topic: initial.kafka.topics.destinations,
        keyring,
        logger: ctx.logger,
        retry: life.startup,
        groupPrefix: `${initial.kafka.clientId}.${ctx.name}.destinations`,
      }),
    (r) => ({ stop: () => r.close(), ready: { kafka: () => r.connected } }),
  );
  await reader.ready;
  life.add({ name: 'runtime destinations', stop: layCatalog({ store: ctx.config, reader, logger: ctx.logger }) });
  catalogMetrics(ctx, reader);
  ctx.logger.info(
    { runtime: runtimeCount(ctx.config), runtimeSources: runtimeSourceCount(ctx.config) },
    'runtime destinations on: catalog read',
  );
  return { reader, keyring };
}

/** Runtime destinations in force: the merged destinations past the file's (ignored ones are not in force). */
const runtimeCount = (store: ConfigStore) => store.current.destinations.length - store.file.destinations.length;

/** Runtime sources in force: the merged sources past the file's. */
const runtimeSourceCount = (store: ConfigStore) => store.current.sources.length - store.file.sources.length;

/** A gauge read at scrape time; a restarted service's replaces its own. */
function gauge(registry: Registry, metric: { name: string; help: string; read: () => number }): void {
  registry.removeSingleMetric(metric.name);
  new Gauge({
    name: metric.name,
    help: metric.help,
    registers: [registry],
    collect() {
      this.set(metric.read());
    },
  });
}

/** The catalog's gauges (docs/reference/observability.md). */
function catalogMetrics(ctx: ServiceContext, reader: Pick<CatalogReader, 'appliedOffset'>): void {
  gauge(ctx.registry, {
    name: 'sluice_destination_catalog_applied_offset',
    help: 'The offset after the last record of the destination catalog this service has applied',
    read: () => reader.appliedOffset,
  });
  gauge(ctx.registry, {
    name: 'sluice_runtime_destinations',
    help: 'Runtime destinations in force in this service (merged with the config file; ignored ones not counted)',
    read: () => runtimeCount(ctx.config),
  });
  gauge(ctx.registry, {
    name: 'sluice_runtime_sources',
    help: 'Runtime sources in force in this service (merged with the config file; ignored ones not counted)',
    read: () => runtimeSourceCount(ctx.config),
  });
}
