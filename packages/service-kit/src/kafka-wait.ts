import { awaitKafka } from '@sluice/kafka';
import type { StartCondition } from './run-service.ts';
import type { ServiceContext } from './service-context.ts';

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
