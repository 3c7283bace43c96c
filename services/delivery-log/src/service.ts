import {
  ConcurrentConsumer,
  ConsumerMetrics,
  createKafka,
  ensureTopics,
  shutdownInOrder,
  topicSpecs,
  trackedAdmin,
} from '@sluice/kafka';
import { routeEvent } from '@sluice/deliverer';
import type { EventEnvelope } from '@sluice/envelope';
import { startHttpServer, type RunningService, type ServiceContext } from '@sluice/service-kit';
import { createApiHandler } from './adapters/api.ts';
import { openDatabase, type Sql } from './adapters/database.ts';
import { IngestBatcher } from './adapters/ingest-batcher.ts';
import { migrate } from './adapters/migrations.ts';
import { Pruner } from './adapters/pruner.ts';
import { Replayer } from './adapters/replayer.ts';
import { LogStore } from './adapters/store.ts';
import { databaseSettings, groupId, maxSizeBytes, topicRoles } from './config.ts';
import { IN_FLIGHT_PER_PARTITION, INGEST_LANES } from './constants.ts';
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
  return {
    async start(): Promise<DeliveryLogService> {
      const now = options.now ?? Date.now;
      const initial = ctx.config.current;
      const { logger } = ctx;
      const settings = databaseSettings(initial, ctx.env);
      let sql: Sql;
      let instanceId: string;
      try {
        sql = options.sql ?? (await openDatabase(settings));
        instanceId = await migrate(sql);
      } catch (err) {
        throw new DatabaseUnavailableError(`cannot open the delivery-log database: ${(err as Error).message}`, {
          cause: err,
        });
      }
      const store = new LogStore(sql);
      const metrics = new DeliveryLogMetrics(ctx.registry);

      const kafka = createKafka({
        brokers: ctx.brokers,
        clientId: `${initial.kafka.clientId}-delivery-log`,
        logger,
        security: initial.kafka,
      });
      const { admin, connected: adminConnected } = trackedAdmin(kafka);
      await admin.connect();
      await ensureTopics(admin, topicSpecs(initial));

      const roles = topicRoles(initial);
      const batcher = new IngestBatcher({
        store,
        topics: roles,
        metrics,
        logger,
        keepAfter: () => now() - ctx.config.current.deliveryLog.retentionMs,
        route: (event) => routeEvent(event as EventEnvelope, ctx.config.current.destinations).map((d) => d.id),
        // The embedded database runs one statement at a time in this thread: more lanes would only
        // make its batches smaller.
        lanes: sql.kind === 'postgres' ? INGEST_LANES : 1,
      });
      const lag = new ConsumerMetrics(ctx.registry, { admin, logger });
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
      const pruner = new Pruner({
        sql,
        now,
        metrics,
        logger,
        retentionMs: () => ctx.config.current.deliveryLog.retentionMs,
        intervalMs: initial.deliveryLog.pruneIntervalMs,
        maxSizeBytes: () => maxSizeBytes(ctx.config.current, sql.kind),
      });
      const replayer = new Replayer(kafka, () => ctx.config.current, store, now);
      await consumer.start();
      pruner.start();
      const http = await startHttpServer({
        port: options.port,
        ops: {
          registry: ctx.registry,
          readiness: {
            kafka: () => adminConnected() && consumer.connected,
            database: async () => (await sql.query('select 1 as ok')).length === 1,
            config: () => true,
          },
        },
        handler: createApiHandler({ store, replayer, config: () => ctx.config.current, metrics, now }),
      });
      ctx.config.watch();
      logger.info(
        { database: sql.kind, group: groupId(initial, instanceId), port: http.port },
        'delivery log consuming',
      );
      return {
        port: http.port,
        store,
        pruner,
        fatal: consumer.fatal,
        close: () =>
          shutdownInOrder({
            logger,
            stopIntake: () => http.close(),
            consumers: [consumer],
            producers: [],
            others: [
              () => pruner.stop(),
              () => replayer.close(),
              () => lag.close(),
              () => admin.disconnect(),
              () => ctx.config.close(),
              ...(options.sql ? [] : [() => sql.close()]),
            ],
          }),
      };
    },
  };
}
