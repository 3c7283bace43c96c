import type { SluiceConfig } from '@sluice/config';
import { defineService, type RunningService, type ServiceContext, startRuntimeDestinations } from '@sluice/service-kit';
import { EndpointGates } from '../attempt/endpoint-gates.ts';
import { startDestinationHealth } from '../attempt/health/destination-health.ts';
import { startDelivery } from '../attempt/start-delivery.ts';
import { type IntakeParts, startIntake } from '../intake/start-intake.ts';
import { startOrdering } from '../ordering/start-ordering.ts';
import { startParking } from '../parking/start-parking.ts';
import { startTransport } from '../transport/start-transport.ts';
import { DelivererMetrics } from './metrics.ts';
import type { DelivererOptions, StartContext } from './options.ts';
import { startSideRecords } from './side-records.ts';

export type { DelivererOptions } from './options.ts';

export interface DelivererService extends RunningService {
  port: number;
}

/**
 * The deliverer (docs/reference/routing.md, delivery.md): consumes `sluice.events` and `sluice.redeliver`, POSTs signed
 * webhooks, and hands failures to the retry service or the dead-letter topic. Its parts start in
 * this order and the service lifecycle stops them newest first (docs/deliverer.md, "Layout").
 */
export function createDeliverer(ctx: ServiceContext, options: DelivererOptions) {
  return defineService(ctx, async (life): Promise<{ port: number }> => {
    const { kafka, admin } = await life.kafka();
    // Before every part reads the config: the runtime destinations in force at start count as the file's.
    await startRuntimeDestinations({ ctx, life, kafka });
    const start: StartContext = { ctx, life, options, kafka, admin };
    const sink = await startSideRecords(start);
    const metrics = new DelivererMetrics(ctx.registry);
    const gates = new EndpointGates(ctx.logger);
    const transport = startTransport(start);
    const health = await startDestinationHealth(start, { sink, client: transport.client, metrics });
    // Everything a reload needs is built before the new config is swapped in: a policy that
    // cannot be built refuses the reload, and the running policy and thread stay as they are.
    const stopReloading = ctx.config.onReload((config: SluiceConfig) => {
      const applyToTransport = transport.prepareReload(config);
      return () => {
        gates.retain(config);
        health.retain(config);
        applyToTransport();
      };
    });
    life.add({ name: 'config reload step', stop: stopReloading });
    const parking = await startParking(start, { sink, metrics });
    const consumers: IntakeParts['consumers'] = [];
    const crowded = () => consumers.some((c) => c.crowded);
    const delivery = startDelivery(start, { client: transport.client, sink, metrics, gates, watch: health, crowded });
    const ordering = await startOrdering(start, { sink, metrics, delivery });
    await startIntake(start, { sink, metrics, parking, watch: health, delivery, ordering, consumers });
    const http = await life.http({ port: options.port });
    return { port: http.port };
  });
}
