import { randomUUID } from 'node:crypto';
import { createEnvelopeCodec, type EnvelopeCodec } from '@sluice/codec';
import { SafeProducer, type Kafka } from '@sluice/kafka';
import type { TopicMessages } from 'kafkajs';
import { defineService, type RunningService, type ServiceContext, startRuntimeDestinations } from '@sluice/service-kit';
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
 * deletion API on one port, producing into Kafka with a short linger through idempotent producers
 * (two by default, `INGEST_DEFAULTS.producers`), in a producer thread unless `producerThread` is false.
 */
export function createIngest(ctx: ServiceContext, options: IngestOptions) {
  return defineService(ctx, async (life): Promise<{ port: number; adminPort?: number }> => {
    const config = ctx.config.current;
    // The admin client only creates the topics: ingest reads no offsets.
    const { kafka } = await life.kafka({ keepAdmin: false });
    // Runtime sources (and destinations, for deletions) in force before the API opens: a key the
    // catalog holds is accepted from the first request (docs/reference/runtime-sources.md).
    await startRuntimeDestinations({ ctx, life, kafka });
    const producerCount = options.producers ?? INGEST_DEFAULTS.producers;
    const producer =
      options.producerThread === false
        ? await life.producer(producerPool(kafka, producerCount), 'producers')
        : await life.producerThread(producerCount);
    const metrics = createIngestMetrics(ctx.registry);
    const sender = new LingeringSender(producer, {
      lingerMs: () => ctx.config.current.ingest.lingerMs,
      onBatch: (n) => metrics.batchSize.observe(n),
    });
    // In-flight requests finish (and wait for their acks) before the server closes; then what they sent is flushed.
    life.add({ name: 'lingering sender', stop: () => sender.drain() });
    const host = options.host && { host: options.host };
    // Prometheus scrapes the admin port, which need not be reachable from where the calls come from.
    const adminHttp =
      options.adminPort === undefined ? undefined : await life.http({ port: options.adminPort, ...host });
    const http = await life.http({
      port: options.port,
      ...host,
      metrics: adminHttp === undefined,
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
        ...(ctx.tracing && { tracing: ctx.tracing }),
      }),
      requestTimeoutMs: config.ingest.requestTimeoutMs,
      headersTimeoutMs: config.ingest.headersTimeoutMs,
    });
    return { port: http.port, ...(adminHttp && { adminPort: adminHttp.port }) };
  });
}

/** In-process SafeProducers behind the same `sendBatch`/`connected`/`disconnect` shape as the thread. */
function producerPool(kafka: Kafka, count: number) {
  const producers = Array.from({ length: count }, () => new SafeProducer(kafka));
  let next = 0;
  return {
    get connected() {
      return producers.every((p) => p.connected);
    },
    connect: async () => {
      await Promise.all(producers.map((p) => p.connect()));
    },
    sendBatch: (topicMessages: TopicMessages[]) => producers[next++ % producers.length]!.sendBatch(topicMessages),
    disconnect: async () => {
      await Promise.all(producers.map((p) => p.disconnect()));
    },
  };
}
