import { startDestinationStateReader } from '@sluice/destination-state';
import type { RecordSink } from '@sluice/kafka';
import { delivererGroupId, parkedGroupId } from '../service/config.ts';
import type { DelivererMetrics } from '../service/metrics.ts';
import type { StartContext } from '../service/options.ts';
import { Parking } from './parking.ts';

/**
 * Pausing (docs/deliverer.md "Pausing"): the destinations' runtime states, read whole before any
 * event is handled (a restart during a pause stays paused), and the parking that acts on them.
 */
export async function startParking(
  start: StartContext,
  parts: { sink: RecordSink; metrics: DelivererMetrics },
): Promise<Parking> {
  const { ctx, life, options, kafka, admin } = start;
  const initial = ctx.config.current;
  const states = await startDestinationStateReader(kafka, initial.kafka.topics.destinationState, ctx.logger, {
    groupPrefix: `${delivererGroupId(initial)}.destination-state`,
    retry: life.startup,
  });
  life.add({ name: 'destination state', stop: () => states.close(), ready: { kafka: () => states.connected } });
  parts.metrics.readStateAppliedFrom(() => states.applied());
  await states.ready;
  const parking = new Parking({
    config: () => ctx.config.current,
    view: states.view,
    sink: parts.sink,
    admin,
    groupId: parkedGroupId(initial),
    metrics: parts.metrics,
    logger: ctx.logger,
    now: Date.now,
    ...(options.parkCheckIntervalMs !== undefined && { checkEveryMs: options.parkCheckIntervalMs }),
  });
  // The parked topics that exist: read from the start (the others are created at their first park).
  await life.startup('list the parked topics', () => parking.findTopics());
  // A destination gone from the config in force (deleted, or removed from the file) has its parked topic read again.
  const onChange = () => parking.configChanged();
  ctx.config.on('change', onChange);
  const close = () => {
    ctx.config.off('change', onChange);
    parking.close();
  };
  life.add({ name: 'parking', stopIntake: close, stop: close });
  return parking;
}
