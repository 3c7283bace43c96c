import { createEnvelopeCodec, createSnapshotCodec } from '@sluice/codec';
import {
  ConsumerMetrics,
  SafeProducer,
  createKafka,
  ensureTopics,
  shutdownInOrder,
  topicSpecs,
  trackedAdmin,
} from '@sluice/kafka';
import { startHttpServer, type RunningService, type ServiceContext } from '@sluice/service-kit';
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
 * Start: topics → rebuild membership from `sluice.audience-state` → consume `sluice.audiences` →
 * open the HTTP API.
 */
export function createAudienceSync(ctx: ServiceContext, options: AudienceSyncOptions) {
  return {
    async start(): Promise<AudienceSyncService> {
      // Everything opened so far, closed newest first if a later step fails: a half-started
      // service must not keep Kafka connections (and so the process) alive.
      const opened: (() => Promise<void>)[] = [];
      try {
        return await startParts(ctx, options, opened);
      } catch (err) {
        for (const close of opened.reverse())
          await close().catch((e) => ctx.logger.warn({ err: e }, 'close after a failed start failed'));
        throw err;
      }
    },
  };
}

/** The start sequence; each step registers its close in `opened` before it can fail half-way. */
async function startParts(
  ctx: ServiceContext,
  options: AudienceSyncOptions,
  opened: (() => Promise<void>)[],
): Promise<AudienceSyncService> {
  const config = ctx.config.current;
  const clientId = `${config.kafka.clientId}-audience-sync`;
  const kafka = createKafka({ brokers: ctx.brokers, clientId, logger: ctx.logger, security: config.kafka });
  const { admin, connected: adminConnected } = trackedAdmin(kafka);
  opened.push(() => admin.disconnect());
  await admin.connect();
  await ensureTopics(admin, topicSpecs(config));

  const metrics = createMetrics(ctx.registry);
  const producer = new SafeProducer(kafka);
  opened.push(() => producer.disconnect());
  await producer.connect();
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
  const readUpTo = await stateTopicEnds(admin, config.kafka.topics.audienceState);
  await rebuildState({
    kafka,
    admin,
    topic: config.kafka.topics.audienceState,
    clientId,
    logger: ctx.logger,
    apply: (k, v) => processor.loadState(k, v),
  });
  metrics.stateIndexBytes.set(processor.indexBytes);

  const lag = new ConsumerMetrics(ctx.registry, { admin, logger: ctx.logger });
  opened.push(async () => lag.close());
  const groupId = options.groupId ?? `${config.kafka.clientId}-audience-sync`;
  const ownership = new OwnershipGuard({
    admin,
    readUpTo,
    groupId,
    logger: ctx.logger,
    active: metrics.active,
    topic: config.kafka.topics.audiences,
    stateTopic: config.kafka.topics.audienceState,
    committed: (): ReadonlyMap<number, number> => consumer.committedOffsets(),
    startedAt: (options.now ?? Date.now)(),
  });
  const consumer = new SnapshotConsumer({
    kafka,
    groupId,
    topic: config.kafka.topics.audiences,
    logger: ctx.logger,
    metrics: lag,
    partitionAssigners: [ownership.assigner],
    handle: async (record, heartbeat) => {
      await ownership.ready();
      return processor.handle(record, heartbeat);
    },
    heldOffset: (partition) => processor.heldOffset(partition),
  });
  ownership.watch(consumer.consumer);
  opened.push(() => consumer.close());
  await consumer.start();

  const http = await startHttpServer({
    port: options.port,
    ops: {
      registry: ctx.registry,
      readiness: { kafka: () => adminConnected() && producer.connected && consumer.connected, config: () => true },
    },
    handler: createSnapshotApi({ producer, config: ctx.config, metrics, codec: snapshotCodec }),
  });
  opened.push(() => http.close());
  ctx.config.watch();
  return {
    port: http.port,
    fatal: Promise.race([consumer.fatal, ownership.fatal]),
    close: () =>
      shutdownInOrder({
        logger: ctx.logger,
        stopIntake: () => http.close(),
        consumers: [consumer],
        producers: [producer],
        others: [() => lag.close(), () => admin.disconnect(), () => ctx.config.close()],
      }),
  };
}
