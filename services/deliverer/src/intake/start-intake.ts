import { randomUUID } from 'node:crypto';
import { createEnvelopeCodec } from '@sluice/codec';
import { ConsumerMetrics, copartitionedAssigner, GrowingConsumer } from '@sluice/kafka';
import type { Delivery } from '../attempt/delivery.ts';
import type { StartedOrdering } from '../ordering/start-ordering.ts';
import { delivererGroupId, parkedGroupId } from '../service/config.ts';
import { EVENTS_SWAP_DRAIN_MS } from '../service/constants.ts';
import type { StartContext } from '../service/options.ts';
import { createParkedHandler } from './handle-parked.ts';
import { createRecordHandler, type RecordHandlerDeps } from './handle-record.ts';

/** What the intake hands its records to, and where it lists its consumers (the deliveries ask whether one is crowded). */
export interface IntakeParts extends Pick<RecordHandlerDeps, 'sink' | 'metrics' | 'parking' | 'watch'> {
  delivery: Delivery;
  ordering: StartedOrdering;
  consumers: GrowingConsumer[];
}

/**
 * The consumers: one group over `sluice.events`, `sluice.redeliver` and the waiting topics that
 * exist, and one over the parked topics that exist (each read only while its destination is
 * active). Both are `GrowingConsumer`s: a waiting topic created for a destination ordered, or a parked topic
 * by a first park, joins its group's list. Partition p of every topic this process reads goes to
 * one process (per-user order's owner). Their lag is read into the metrics.
 */
export async function startIntake(start: StartContext, parts: IntakeParts): Promise<void> {
  const { ctx, life, options, kafka, admin } = start;
  const initial = ctx.config.current;
  const { delivery, ordering, consumers, parking } = parts;
  const topics = { events: initial.kafka.topics.events, redeliver: initial.kafka.topics.redeliver };
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
    ordering: ordering.ordering,
  };
  const consumerBase = {
    kafka,
    maxInFlightPerPartition: initial.delivery.maxInFlightPerPartition,
    onCrowded: () => delivery.judgeSoon(),
    logger: ctx.logger,
    metrics: lag,
    partitionAssigners: [copartitionedAssigner(randomUUID())],
  };
  const events = new GrowingConsumer({
    ...consumerBase,
    groupId: delivererGroupId(initial),
    topics: [topics.events, topics.redeliver, ...ordering.waitingTopics.names()],
    handle: createRecordHandler(handlerDeps),
    swapDrainMs: EVENTS_SWAP_DRAIN_MS,
    onAssigned: (a: Record<string, number[]>) => {
      ordering.store.assigned(a[topics.events] ?? []);
      // Another replica may have created a waiting topic: this one reads it too once it knows it.
      ordering.waitingTopics.findSoon();
    },
  });
  ordering.waitingTopics.readBy(events);
  consumers.push(events);
  if (parking) {
    // One consumer of every parked topic that exists, its list grown as topics are created.
    const parked = new GrowingConsumer({
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
