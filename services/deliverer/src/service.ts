import { createKafka, ensureTopics, shutdownInOrder, topicSpecs } from '@sluice/kafka';
import { startHttpServer, type RunningService, type ServiceContext } from '@sluice/service-kit';

export interface DelivererOptions {
  /** Port of /metrics, /healthz and /readyz (0 picks a free one). */
  port: number;
}

export interface DelivererService extends RunningService {
  port: number;
}

/** Shell of the deliverer service: topics, ops routes and graceful shutdown. */
export function createDeliverer(ctx: ServiceContext, options: DelivererOptions) {
  return {
    async start(): Promise<DelivererService> {
      const kafka = createKafka({ brokers: ctx.brokers, clientId: `${ctx.config.current.kafka.clientId}-deliverer`, logger: ctx.logger });
      const admin = kafka.admin();
      let kafkaReady = false;
      admin.on(admin.events.CONNECT, () => (kafkaReady = true));
      admin.on(admin.events.DISCONNECT, () => (kafkaReady = false));
      await admin.connect();
      await ensureTopics(admin, topicSpecs(ctx.config.current));
      const http = await startHttpServer({
        port: options.port,
        ops: { registry: ctx.registry, readiness: { kafka: () => kafkaReady, config: () => true } },
      });
      ctx.config.watch();
      return {
        port: http.port,
        close: () =>
          shutdownInOrder({ logger: ctx.logger, stopIntake: () => http.close(), others: [() => admin.disconnect(), () => ctx.config.close()] }),
      };
    },
  };
}
