import { createEnvelopeCodec } from '@sluice/codec';
import { ConcurrentConsumer, ConsumerMetrics } from '@sluice/kafka';
import { routeEvent } from '@sluice/webhook';
import type { EventEnvelope } from '@sluice/envelope';
import { defineService, type RunningService, type ServiceContext } from '@sluice/service-kit';
import { createApiHandler } from './adapters/http/api.ts';
import { startDefinitionCatalog } from './adapters/kafka/definition-catalog.ts';
import { KafkaDestinationControl } from './adapters/kafka/destination-control.ts';
import { openDatabase, type Sql } from './adapters/db/database.ts';
import { IngestBatcher } from './adapters/kafka/ingest-batcher.ts';
import { LedgerMonitor } from './adapters/db/ledger-monitor.ts';
import { ActionLog } from './adapters/db/action-log.ts';
import { ChangeAudit } from './adapters/db/change-audit.ts';
import { migrate } from './adapters/db/migrations.ts';
import { Pruner } from './adapters/db/pruner.ts';
import { ReplayLog } from './adapters/db/replay-log.ts';
import { Replayer } from './adapters/kafka/replayer.ts';
import { LogStore } from './adapters/db/store.ts';
import { databaseSettings, groupId, maxSizeBytes, topicRoles } from './config.ts';
import { GROUP_SUFFIX, IN_FLIGHT_PER_PARTITION, INGEST_LANES } from './constants.ts';
import { DatabaseUnavailableError } from './errors.ts';
import { DeliveryLogMetrics } from './metrics.ts';

export interface DeliveryLogOptions {
  /** Port of the API, the console, /metrics, /healthz and /readyz (0 picks a free one). */
  port: number;
  /** Injected for tests (retention, health windows, replays); default `Date.now`. */
  now?: () => number;
  /** An open database to use instead of the configured one (tests, benchmarks). */
  sql?: Sql;
}

export interface DeliveryLogService extends RunningService {
  port: number;
  store: LogStore;
  pruner: Pruner;
}

/**
 * The delivery log (docs/delivery-log.md): reads the events, attempts, dead-letter and rejected
 * topics into a SQL database, and serves the API and the console over it.
 */
export function createDeliveryLog(ctx: ServiceContext, options: DeliveryLogOptions) {
  return defineService(ctx, async (life): Promise<{ port: number; store: LogStore; pruner: Pruner }> => {
    const now = options.now ?? Date.now;
    const initial = ctx.config.current;
    const { logger } = ctx;
    let sql: Sql;
    let instanceId: string;
    try {
      sql = options.sql ?? (await openDatabase(databaseSettings(initial, ctx.env)));
      const db = sql;
      life.add({
        name: 'database',
        ready: { database: async () => (await db.query('select 1 as ok')).length === 1 },
        // A database handed in is its owner's to close.
        ...(!options.sql && { stop: () => db.close() }),
      });
      instanceId = await migrate(sql);
    } catch (err) {
      throw new DatabaseUnavailableError(`cannot open the delivery-log database: ${(err as Error).message}`, {
        cause: err,
      });
    }
    const store = new LogStore(sql);
    const replayLog = new ReplayLog(sql);
    const metrics = new DeliveryLogMetrics(ctx.registry);
    const { kafka, admin } = await life.kafka();
    const definitions = await startDefinitionCatalog({ ctx, life, kafka });

    const roles = topicRoles(initial);
    const batcher = new IngestBatcher({
      store,
      replayLog,
      topics: roles,
      metrics,
      logger,
      keepAfter: () => now() - ctx.config.current.deliveryLog.retentionMs,
      route: (event) => routeEvent(event as EventEnvelope, ctx.config.current.destinations).map((d) => d.id),
      // The embedded database runs one statement at a time in this thread: more lanes would only
      // make its batches smaller.
      lanes: sql.kind === 'postgres' ? INGEST_LANES : 1,
      codec: createEnvelopeCodec({
        schemaRegistryUrl: ctx.env.schemaRegistryUrl,
        access: initial.schemaRegistry,
        topic: roles.events,
      }),
    });
    const lag = new ConsumerMetrics(ctx.registry, { admin, logger });
    life.add({ name: 'consumer lag', stop: () => lag.close() });
    const replayer = new Replayer(kafka, () => ctx.config.current, replayLog, now);
    life.add({ name: 'replayer', stop: () => replayer.close() });
    const consumer = new ConcurrentConsumer({
      kafka,
      logger,
      metrics: lag,
      groupId: groupId(initial, instanceId),
      topics: [roles.events, roles.attempts, roles.deadLetter, roles.rejected],
      maxInFlightPerPartition: IN_FLIGHT_PER_PARTITION,
      maxInFlightBytes: initial.deliveryLog.maxInFlightBytes,
      fromBeginning: true,
      handle: batcher.handle,
    });
    await life.consumers([consumer]);
    const pruner = new Pruner({
      sql,
      now,
      metrics,
      logger,
      retentionMs: () => ctx.config.current.deliveryLog.retentionMs,
      intervalMs: initial.deliveryLog.pruneIntervalMs,
      maxSizeBytes: () => maxSizeBytes(ctx.config.current, sql.kind),
    });
    await life.start({ name: 'pruner', stop: () => pruner.stop() }, () => pruner.start());
    const actions = new ActionLog(sql);
    const control = new KafkaDestinationControl({
      kafka,
      topics: { state: initial.kafka.topics.destinationState, actions: initial.kafka.topics.destinationActions },
      clientId: `${initial.kafka.clientId}.${GROUP_SUFFIX}`,
      logger,
      now,
      retry: life.startup,
      keeper: actions,
    });
    await life.start({ name: 'destination control', stop: () => control.stop() }, () => control.start());
    const ledger = new LedgerMonitor({ store, now, config: () => ctx.config.current, control, metrics, logger });
    await life.start({ name: 'ledger', stop: () => ledger.stop() }, async () => ledger.start());
    const http = await life.http({
      port: options.port,
      handler: createApiHandler({
        store,
        replayer,
        config: () => ctx.config.current,
        metrics,
        now,
        logger,
        control,
        actions,
        definitions: { ...definitions, changes: new ChangeAudit(sql, 'destination') },
        sources: { ...definitions, changes: new ChangeAudit(sql, 'source') },
        tokens: definitions,
        portalLinks: definitions,
      }),
    });
    logger.info({ database: sql.kind, group: groupId(initial, instanceId), port: http.port }, 'delivery log consuming');
    return { port: http.port, store, pruner };
  });
}
