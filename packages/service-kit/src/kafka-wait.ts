import { awaitKafka, StartupRetry } from '@sluice/kafka';
import { type RunningService, runService, type StartCondition } from './run-service.ts';
import { loadServiceContext, type ServiceContext } from './service-context.ts';

/**
 * What every service waits for before it starts (`runService`'s `waitFor`): the brokers accepting
 * a connection with the config's TLS and SASL settings. Meanwhile `port` answers `/readyz` 503
 * (`kafka: false`), and the log names the cause once each time it changes (`awaitKafka`).
 */
export function waitForKafka(ctx: ServiceContext, port: number): StartCondition {
  return {
    check: 'kafka',
    port,
    registry: ctx.registry,
    until: (signal, waiting) => {
      const config = ctx.config.current;
      return awaitKafka({
        brokers: ctx.brokers,
        clientId: `${config.kafka.clientId}-${ctx.name}-check`,
        security: config.kafka,
        logger: ctx.logger,
        signal,
        onWaiting: waiting,
      });
    },
  };
}

/**
 * A service's `main.ts` in one call: loads its context, waits for Kafka on its port (the port named
 * `portOf` in the environment's ports), then runs what `start` starts until SIGTERM/SIGINT
 * (`runService`). Once the brokers answer, start-up has `kafka.startupTimeout` to get past the
 * brokers' "not yet" answers (`ctx.startup`), while the port answers `/readyz` 503 naming what it
 * waits for.
 */
export async function runKafkaService(
  name: string,
  portOf: (ports: ServiceContext['env']['ports']) => number,
  start: (ctx: ServiceContext, port: number) => Promise<RunningService>,
): Promise<void> {
  const ctx = loadServiceContext(name);
  const port = portOf(ctx.env.ports);
  await runService({
    name: ctx.name,
    logger: ctx.logger,
    waitFor: waitForKafka(ctx, port),
    start: (probe) => {
      const retry = new StartupRetry({
        timeoutMs: ctx.config.current.kafka.startupTimeoutMs,
        logger: ctx.logger,
        registry: ctx.registry,
      });
      probe?.explain(() => retry.waitingFor ?? 'start-up');
      const startup = { retry, releasePort: async (p: number) => probe?.release(p) };
      return start({ ...ctx, startup }, port);
    },
  });
}
