import { randomUUID } from 'node:crypto';
import { createEnvelopeCodec } from '@sluice/codec';
import { ConcurrentConsumer, ConsumerMetrics, copartitionedAssigner } from '@sluice/kafka';
import type { Delivery } from '../attempt/delivery.ts';
import { Ordering } from '../ordering/ordering.ts';
import { ParkedConsumer } from '../parking/parked-consumer.ts';
import type { StartedOrdering } from '../ordering/start-ordering.ts';
import { delivererGroupId, parkedGroupId } from '../service/config.ts';
import type { StartContext } from '../service/options.ts';
import { createParkedHandler } from './handle-parked.ts';
import { createRecordHandler, type RecordHandlerDeps } from './handle-record.ts';

/** What the intake hands its records to, and where it lists its consumers (the deliveries ask whether one is crowded). */
export interface IntakeParts extends Pick<RecordHandlerDeps, 'sink' | 'metrics' | 'parking' | 'watch'> {
  delivery: Delivery;
  ordering: StartedOrdering | undefined;
  consumers: (ConcurrentConsumer | ParkedConsumer)[];
}

/**
 * The consumers: one group over `sluice.events`, `sluice.redeliver` and the ordered destinations'
 * waiting topics, and one over the parked topics that exist (each read only while its destination
 * is active; a topic created by a first park joins the list, `ParkedConsumer`). Partition p of every topic this process reads goes to one process
 * (per-user order's owner). Their lag is read into the metrics.
 */
export async function startIntake(start: StartContext, parts: IntakeParts): Promise<void> {
  const { ctx, life, options, kafka, admin } = start;
  const initial = ctx.config.current;
  const { delivery, ordering, consumers, parking } = parts;
  const topics = {
    events: initial.kafka.topics.events,
    redeliver: initial.kafka.topics.redeliver,
    waiting: ordering ? Ordering.topics(initial) : [],
  };
  const lag = new ConsumerMetrics(ctx.registry, {
    admin,
    logger: ctx.logger,
    ...(options.lagIntervalMs !== undefined && { intervalMs: options.lagIntervalMs }),
  });
  life.add({ name: 'consumer lag', stop: () => lag.close() });
  const handlerDeps: RecordHandlerDeps = {
    sink: parts.sink,
    metrics: parts.metrics,
    delivery,
    ...(parking && { parking }),
    ...(parts.watch && { watch: parts.watch }),
    config: () => ctx.config.current,
    topics,
    codec:
      options.codec ??
      createEnvelopeCodec({
        schemaRegistryUrl: ctx.env.schemaRegistryUrl,
        access: initial.schemaRegistry,
        topic: topics.events,
      }),
    logger: ctx.logger,
    ...(ordering && { ordering: ordering.ordering }),
  };
  const consumerBase = {
    kafka,
    maxInFlightPerPartition: initial.delivery.maxInFlightPerPartition,
    onCrowded: () => delivery.judgeSoon(),
    logger: ctx.logger,
    metrics: lag,
    partitionAssigners: [copartitionedAssigner(randomUUID())],
  };
  consumers.push(
    new ConcurrentConsumer({
      ...consumerBase,
      groupId: delivererGroupId(initial),
      topics: [topics.events, topics.redeliver, ...topics.waiting],
      handle: createRecordHandler(handlerDeps),
      ...(ordering && {
        onAssigned: (a: Record<string, number[]>) => ordering.store.assigned(a[topics.events] ?? []),
      }),
    }),
  );
  if (parking) {
    // One consumer of every parked topic that exists, its list grown as topics are created.
    const parked = new ParkedConsumer({
      ...consumerBase,
      groupId: parkedGroupId(initial),
      topics: parking.topics(),
      handle: createParkedHandler(handlerDeps),
    });
    consumers.push(parked);
    // Before any record is handled: which parked topics to hold, which hold records to drain first.
    await parking.start(parked);
  }
  await life.consumers(consumers, {
    ...(options.drainTimeoutMs !== undefined && { drainTimeoutMs: options.drainTimeoutMs }),
  });
}
