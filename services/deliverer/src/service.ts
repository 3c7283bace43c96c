import { createEnvelopeCodec, type EnvelopeCodec } from '@sluice/codec';
import type { SluiceConfig } from '@sluice/config';
import {
  ConcurrentConsumer,
  ConsumerMetrics,
  createKafka,
  ensureTopics,
  ProducerThread,
  RecordBatcher,
  shutdownInOrder,
  topicSpecs,
} from '@sluice/kafka';
import { startHttpServer, type RunningService, type ServiceContext } from '@sluice/service-kit';
import { PRODUCE_LINGER_MS } from './constants.ts';
import type { LookupFunction } from './adapters/guarded-connector.ts';
import { TimeoutLog } from './adapters/timeout-log.ts';
import { UndiciWebhookClient, type WebhookClient } from './adapters/webhook-client.ts';
import { WebhookThread } from './adapters/webhook-thread.ts';
import { addressPolicy, delivererGroupId, endpointOrigins, poolSettings, webhookThreadSettings } from './config.ts';
import { Delivery } from './delivery.ts';
import { EndpointGates } from './endpoint-gates.ts';
import { createRecordHandler } from './handle-record.ts';
import { IsolationMetrics } from './isolation-metrics.ts';
import { DelivererMetrics } from './metrics.ts';

export interface DelivererOptions {
  /** Port of /metrics, /healthz and /readyz (0 picks a free one). */
  port: number;
  /** Reads `sluice.events`; default the JSON codec. */
  codec?: EnvelopeCodec;
  /** Injected in tests to simulate DNS answers for the SSRF guard; default `dns.lookup`. */
  lookup?: LookupFunction;
  /** Replaces the undici client (tests of the Kafka side, benchmarks). */
  webhookClient?: WebhookClient;
  /**
   * Run the webhook requests in a worker thread (default true): undici's request writing and
   * response parsing then run beside the main thread's Kafka and rendering work. Off (or a
   * `lookup` given, which cannot cross threads) → the same client on the main thread.
   */
  webhookThread?: boolean;
  /** Time allowed at shutdown for in-flight deliveries; default 20 s. */
  drainTimeoutMs?: number;
  /** Interval of the consumer lag reads (docs/reference/observability.md); default 10 s. */
  lagIntervalMs?: number;
}

export interface DelivererService extends RunningService {
  port: number;
}

/**
 * The deliverer (docs/reference/routing.md, delivery.md): consumes `sluice.events` and `sluice.redeliver`, POSTs signed
 * webhooks, and hands failures to the retry service or the dead-letter topic.
 */
export function createDeliverer(ctx: ServiceContext, options: DelivererOptions) {
  return {
    async start(): Promise<DelivererService> {
      const initial = ctx.config.current;
      const kafka = createKafka({
        brokers: ctx.brokers,
        clientId: `${initial.kafka.clientId}-deliverer`,
        logger: ctx.logger,
        security: initial.kafka,
      });
      const admin = kafka.admin();
      await admin.connect();
      await ensureTopics(admin, topicSpecs(initial));

      // Side records (one attempt record per request, retries, dead letters) are encoded by kafkajs
      // in a producer thread: the largest Kafka cost of a delivery then runs beside the HTTP work.
      const producer = await ProducerThread.start({
        service: ctx.name,
        brokers: ctx.brokers,
        clientId: `${initial.kafka.clientId}-deliverer`,
        security: initial.kafka,
        logLevel: ctx.logger.level,
        producers: 1,
      });
      const sink = new RecordBatcher(producer, { lingerMs: PRODUCE_LINGER_MS, logger: ctx.logger });
      const metrics = new DelivererMetrics(ctx.registry);
      const gates = new EndpointGates(ctx.logger);
      const isolation = new IsolationMetrics(ctx.registry, gates);

      let policy = addressPolicy(initial);
      const client =
        options.webhookClient ??
        (options.webhookThread !== false && !options.lookup
          ? new WebhookThread(webhookThreadSettings(initial))
          : new UndiciWebhookClient({
              settings: () => poolSettings(ctx.config.current),
              policy: () => policy,
              ...(options.lookup && { lookup: options.lookup }),
            }));
      // Everything a reload needs is built before the new config is swapped in: a policy that
      // cannot be built refuses the reload, and the running policy and thread stay as they are.
      const stopReloading = ctx.config.onReload((config: SluiceConfig) => {
        const nextPolicy = addressPolicy(config);
        const threadSettings = webhookThreadSettings(config);
        return () => {
          gates.retain(config);
          if (client instanceof UndiciWebhookClient) {
            policy = nextPolicy;
            void client.retain(endpointOrigins(config));
          } else if (client instanceof WebhookThread) client.update(threadSettings);
        };
      });

      const config = () => ctx.config.current;
      const timeouts = new TimeoutLog({ logger: ctx.logger });
      let consumer: ConcurrentConsumer | undefined;
      const delivery = new Delivery({
        config,
        client,
        sink,
        metrics,
        logger: ctx.logger,
        gates,
        isolation,
        onTimeout: (t) => timeouts.timedOut(t),
        crowded: () => consumer?.crowded ?? false,
      });
      metrics.readInFlightFrom(() => delivery.inFlight());
      const topics = { events: initial.kafka.topics.events, redeliver: initial.kafka.topics.redeliver };
      const lag = new ConsumerMetrics(ctx.registry, {
        admin,
        logger: ctx.logger,
        ...(options.lagIntervalMs !== undefined && { intervalMs: options.lagIntervalMs }),
      });
      consumer = new ConcurrentConsumer({
        kafka,
        groupId: delivererGroupId(initial),
        topics: [topics.events, topics.redeliver],
        handle: createRecordHandler({
          config,
          topics,
          codec:
            options.codec ??
            createEnvelopeCodec({
              schemaRegistryUrl: ctx.env.schemaRegistryUrl,
              access: initial.schemaRegistry,
              topic: topics.events,
            }),
          delivery,
          sink,
          metrics,
          logger: ctx.logger,
        }),
        maxInFlightPerPartition: initial.delivery.maxInFlightPerPartition,
        onCrowded: () => delivery.judgeSoon(),
        logger: ctx.logger,
        metrics: lag,
      });
      await consumer.start();

      const http = await startHttpServer({
        port: options.port,
        ops: {
          registry: ctx.registry,
          readiness: { kafka: () => consumer.connected && producer.connected, config: () => true },
        },
      });
      ctx.config.watch();
      return {
        port: http.port,
        fatal: Promise.race([consumer.fatal, producer.died, ...(client instanceof WebhookThread ? [client.died] : [])]),
        close: () =>
          shutdownInOrder({
            logger: ctx.logger,
            stopIntake: () => http.close(),
            consumers: [consumer],
            // Requests still in flight after their destination was done write their attempt records first.
            producers: [
              {
                disconnect: async () => (
                  await delivery.drain(), await sink.flushThenClose(), await producer.disconnect()
                ),
              },
            ],
            others: [
              () => client.close(),
              () => lag.close(),
              () => admin.disconnect(),
              stopReloading,
              () => ctx.config.close(),
            ],
            ...(options.drainTimeoutMs !== undefined && { drainTimeoutMs: options.drainTimeoutMs }),
          }),
      };
    },
  };
}
