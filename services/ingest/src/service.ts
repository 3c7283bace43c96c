import { randomUUID } from 'node:crypto';
import { createEnvelopeCodec, type EnvelopeCodec } from '@sluice/codec';
import {
  createKafka,
  ensureTopics,
  ProducerThread,
  SafeProducer,
  shutdownInOrder,
  topicSpecs,
  type Kafka,
} from '@sluice/kafka';
import type { TopicMessages } from 'kafkajs';
import { startHttpServer, type RunningService, type ServiceContext } from '@sluice/service-kit';
import { createApiHandler } from './adapters/http-api.ts';
import { LingeringSender } from './adapters/lingering-sender.ts';
import { INGEST_DEFAULTS } from './constants.ts';
import { createIngestMetrics } from './metrics.ts';

export interface IngestOptions {
  /** Port of the tracking API and of /healthz, /readyz, and /metrics unless `adminPort` is set (0: a free one). */
  port: number;
  /**
   * Port of /metrics, /healthz and /readyz apart from the public API (`INGEST_ADMIN_PORT`; 0 picks a
   * free one). When set, the public port does not serve /metrics.
   */
  adminPort?: number;
  /** Host to bind. Default `0.0.0.0`. */
  host?: string;
  /** Codec for `sluice.events`. Default: JSON. */
  codec?: EnvelopeCodec;
  /**
   * Run the Kafka producers in a worker thread (default true): kafkajs's record encoding then
   * uses a second core instead of competing with HTTP and JSON work. False keeps them in-process.
   */
  producerThread?: boolean;
  /** SafeProducer instances (batches round-robin). Default `INGEST_DEFAULTS.producers`. */
  producers?: number;
}

export interface IngestService extends RunningService {
  port: number;
  /** The admin port's bound port, when `adminPort` was given. */
  adminPort?: number;
}

/**
 * The ingest service (docs/reference/tracking-api.md, deletions.md): the Segment-compatible tracking API and the
 * deletion API on
 * one port, producing into Kafka through one idempotent producer with a short linger.
 */
export function createIngest(ctx: ServiceContext, options: IngestOptions) {
  return {
    async start(): Promise<IngestService> {
      const config = ctx.config.current;
      const kafka = createKafka({
        brokers: ctx.brokers,
        clientId: `${config.kafka.clientId}-ingest`,
        logger: ctx.logger,
        security: config.kafka,
      });
      const admin = kafka.admin();
      await admin.connect();
      try {
        await ensureTopics(admin, topicSpecs(config));
      } finally {
        // Also on failure, so a failed start leaves no socket keeping the process alive.
        await admin.disconnect();
      }

      const producerCount = options.producers ?? INGEST_DEFAULTS.producers;
      const clientId = `${config.kafka.clientId}-ingest`;
      const producer =
        options.producerThread === false
          ? await connectedProducers(kafka, producerCount)
          : await ProducerThread.start({
              service: ctx.name,
              brokers: ctx.brokers,
              clientId,
              security: config.kafka,
              logLevel: ctx.logger.level,
              producers: producerCount,
            });
      const metrics = createIngestMetrics(ctx.registry);
      const sender = new LingeringSender(producer, {
        lingerMs: () => ctx.config.current.ingest.lingerMs,
        onBatch: (n) => metrics.batchSize.observe(n),
      });
      const ops = { registry: ctx.registry, readiness: { kafka: () => producer.connected, config: () => true } };
      // Prometheus scrapes the admin port, which need not be reachable from where the calls come from.
      const adminHttp =
        options.adminPort === undefined
          ? undefined
          : await startHttpServer({ port: options.adminPort, ...(options.host && { host: options.host }), ops });
      const http = await startHttpServer({
        port: options.port,
        ...(options.host && { host: options.host }),
        ops: { ...ops, metrics: adminHttp === undefined },
        handler: createApiHandler({
          config: ctx.config,
          sender,
          codec:
            options.codec ??
            createEnvelopeCodec({
              schemaRegistryUrl: ctx.env.schemaRegistryUrl,
              access: config.schemaRegistry,
              topic: config.kafka.topics.events,
            }),
          metrics,
          logger: ctx.logger,
          now: Date.now,
          newId: randomUUID,
        }),
        requestTimeoutMs: config.ingest.requestTimeoutMs,
        headersTimeoutMs: config.ingest.headersTimeoutMs,
      });
      ctx.config.watch();
      return {
        port: http.port,
        ...(adminHttp && { adminPort: adminHttp.port }),
        ...('died' in producer && { fatal: producer.died }),
        close: () =>
          shutdownInOrder({
            logger: ctx.logger,
            // In-flight requests finish (and wait for their acks) before the server closes.
            stopIntake: async () => {
              await http.close();
              await sender.drain();
            },
            producers: [producer],
            others: [async () => adminHttp?.close(), () => ctx.config.close()],
          }),
      };
    },
  };
}

/** In-process SafeProducers behind the same `sendBatch`/`connected`/`disconnect` shape as the thread. */
async function connectedProducers(kafka: Kafka, count: number) {
  const producers = Array.from({ length: count }, () => new SafeProducer(kafka));
  await Promise.all(producers.map((p) => p.connect()));
  let next = 0;
  return {
    get connected() {
      return producers.every((p) => p.connected);
    },
    sendBatch: (topicMessages: TopicMessages[]) => producers[next++ % producers.length]!.sendBatch(topicMessages),
    disconnect: async () => {
      await Promise.all(producers.map((p) => p.disconnect()));
    },
  };
}
