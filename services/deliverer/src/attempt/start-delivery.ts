import { TimeoutLog } from '../transport/timeout-log.ts';
import type { StartContext } from '../service/options.ts';
import { Delivery, type DeliveryDeps } from './delivery.ts';
import { IsolationMetrics } from './isolation-metrics.ts';

/**
 * The deliveries: one attempt of a job to its destination, its gates and caps, batching and
 * settling. At shutdown requests still in flight after their destination was done write their
 * attempt records first.
 */
export function startDelivery(
  start: StartContext,
  parts: Pick<DeliveryDeps, 'client' | 'sink' | 'metrics' | 'gates' | 'watch' | 'crowded'>,
): Delivery {
  const { ctx, life } = start;
  const timeouts = new TimeoutLog({ logger: ctx.logger });
  const delivery = new Delivery({
    ...parts,
    config: () => ctx.config.current,
    logger: ctx.logger,
    isolation: new IsolationMetrics(ctx.registry, parts.gates),
    onTimeout: (t) => timeouts.timedOut(t),
    ...(ctx.tracing && { tracing: ctx.tracing }),
  });
  life.add({ name: 'deliveries', stop: () => delivery.drain() });
  parts.metrics.readInFlightFrom(() => delivery.inFlight());
  return delivery;
}
