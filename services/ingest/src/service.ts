import { randomUUID } from 'node:crypto';
import { createJsonCodec, type EnvelopeCodec } from '@sluice/codec';
import { createKafka, ensureTopics, SafeProducer, shutdownInOrder, topicSpecs } from '@sluice/kafka';
import { startHttpServer, type RunningService, type ServiceContext } from '@sluice/service-kit';
import { createApiHandler } from './adapters/http-api.ts';
import { LingeringSender } from './adapters/lingering-sender.ts';
import { createIngestMetrics } from './metrics.ts';

export interface IngestOptions {
  /** Port of the tracking API and of /metrics, /healthz, /readyz (0 picks a free one). */
  port: number;
  /** Host to bind. Default `0.0.0.0`. */
  host?: string;
  /** Codec for `sluice.events`. Default: JSON. */
  codec?: EnvelopeCodec;
}

export interface IngestService extends RunningService {
  port: number;
}

/**
 * The ingest service (SPEC §3, §9): the Segment-compatible tracking API and the deletion API on
 * one port, producing into Kafka through one idempotent producer with a short linger.
 */
export function createIngest(ctx: ServiceContext, options: IngestOptions) {
  return {
    async start(): Promise<IngestService> {
      const config = ctx.config.current;
      const kafka = createKafka({ brokers: ctx.brokers, clientId: `${config.kafka.clientId}-ingest`, logger: ctx.logger });
      const admin = kafka.admin();
      await admin.connect();
      await ensureTopics(admin, topicSpecs(config));
      await admin.disconnect();

      const producer = new SafeProducer(kafka);
      await producer.connect();
      const metrics = createIngestMetrics(ctx.registry);
      const sender = new LingeringSender(producer, {
        lingerMs: () => ctx.config.current.ingest.lingerMs,
        onBatch: (n) => metrics.batchSize.observe(n),
      });
      const http = await startHttpServer({
        port: options.port,
        ...(options.host && { host: options.host }),
        ops: { registry: ctx.registry, readiness: { kafka: () => producer.connected, config: () => true } },
        handler: createApiHandler({
          config: ctx.config,
          sender,
          codec: options.codec ?? createJsonCodec(),
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
        close: () =>
          shutdownInOrder({
            logger: ctx.logger,
            // In-flight requests finish (and wait for their acks) before the server closes.
            stopIntake: async () => {
              await http.close();
              await sender.drain();
            },
            producers: [producer],
            others: [() => ctx.config.close()],
          }),
      };
    },
  };
}
