import { createEnvelopeCodec, createSnapshotCodec } from '@sluice/codec';
import { ConsumerMetrics, SafeProducer } from '@sluice/kafka';
import { defineService, type RunningService, type ServiceContext, startRuntimeDestinations } from '@sluice/service-kit';
import { createSnapshotApi } from './adapters/http-api.ts';
import { createKafkaSinks } from './adapters/kafka-sinks.ts';
import { SnapshotConsumer } from './adapters/snapshot-consumer.ts';
import { rebuildState } from './adapters/state-rebuild.ts';
import { OwnershipGuard, stateTopicEnds } from './adapters/ownership-guard.ts';
import { DEFAULT_EMIT_BATCH_SIZE, type AudienceSyncOptions } from './config.ts';
import { createMetrics } from './metrics.ts';
import { createSnapshotReader } from './adapters/snapshot-reader.ts';
import { SyncProcessor } from './sync-processor.ts';

export type { AudienceSyncOptions } from './config.ts';

export interface AudienceSyncService extends RunningService {
  port: number;
  fatal: Promise<Error>;
}

/**
 * The audience-sync service (docs/reference/audiences.md): snapshot chunks in (topic and HTTP), identify events out.
 * Start: topics → the runtime catalog read (when on) → rebuild membership from `sluice.audience-state`
 * → consume `sluice.audiences` → open the HTTP API; a start that fails half-way ends what it had started.
 */
export function createAudienceSync(ctx: ServiceContext, options: AudienceSyncOptions) {
  return defineService(ctx, async (life): Promise<{ port: number }> => {
    const config = ctx.config.current;
    const { kafka, admin } = await life.kafka();
    // Runtime sources in force before a chunk is read or posted: a snapshot may name one, as it
    // names a source of the file (docs/reference/runtime-sources.md, "In audience-sync").
    await startRuntimeDestinations({ ctx, life, kafka });
    const metrics = createMetrics(ctx.registry);
    const producer = await life.producer(new SafeProducer(kafka));
    const schemaRegistryUrl = ctx.env.schemaRegistryUrl;
    const snapshotCodec = createSnapshotCodec({
      schemaRegistryUrl,
      access: config.schemaRegistry,
      topic: config.kafka.topics.audiences,
    });
    const processor = new SyncProcessor({
      ...createKafkaSinks(
        producer,
        createEnvelopeCodec({ schemaRegistryUrl, access: config.schemaRegistry, topic: config.kafka.topics.events }),
        ctx.config,
      ),
      readSnapshot: createSnapshotReader(snapshotCodec),
      metrics,
      logger: ctx.logger,
      isKnownSource: (id) => ctx.config.current.sources.some((s) => s.id === id),
      batchSize: options.emitBatchSize ?? DEFAULT_EMIT_BATCH_SIZE,
      now: options.now ?? Date.now,
    });
    // Where the state topic ended before it was read: the owner checks nobody wrote past it (ownership-guard.ts).
    const stateTopic = config.kafka.topics.audienceState;
    const readUpTo = await life.startup(`list offsets of ${stateTopic}`, () => stateTopicEnds(admin, stateTopic));
    // Read again from the beginning after a Kafka error: the same records give the same state.
    await life.startup('rebuild the audience state', () =>
      rebuildState({
        kafka,
        admin,
        topic: stateTopic,
        clientId: life.clientId,
        logger: ctx.logger,
        apply: (k, v) => processor.loadState(k, v),
      }),
    );
    metrics.stateIndexBytes.set(processor.indexBytes);

    const lag = new ConsumerMetrics(ctx.registry, { admin, logger: ctx.logger });
    life.add({ name: 'consumer lag', stop: () => lag.close() });
    const groupId = options.groupId ?? `${config.kafka.clientId}-audience-sync`;
    const ownership = new OwnershipGuard({
      admin,
      readUpTo,
      groupId,
      logger: ctx.logger,
      active: metrics.active,
      topic: config.kafka.topics.audiences,
      stateTopic,
      retry: life.retryKafka,
      committed: (): ReadonlyMap<number, number> => consumer.committedOffsets(),
      startedAt: (options.now ?? Date.now)(),
    });
    life.add({ name: 'ownership guard', fatal: ownership.fatal });
    const consumer = new SnapshotConsumer({
      kafka,
      groupId,
      topic: config.kafka.topics.audiences,
      logger: ctx.logger,
      metrics: lag,
      partitionAssigners: [ownership.assigner],
      ...(options.membership && { membership: options.membership }),
      handle: async (record, heartbeat) => {
        await ownership.ready();
        return processor.handle(record, heartbeat);
      },
      heldOffset: (partition) => processor.heldOffset(partition),
    });
    ownership.watch(consumer.consumer);
    await life.consumers([consumer]);

    const http = await life.http({
      port: options.port,
      handler: createSnapshotApi({ producer, config: ctx.config, metrics, codec: snapshotCodec }),
    });
    return { port: http.port };
  });
}
