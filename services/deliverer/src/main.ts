import { loadServiceContext, runService, waitForKafka } from '@sluice/service-kit';
import { createDeliverer } from './service.ts';

const ctx = loadServiceContext('deliverer');
const port = ctx.env.ports.deliverer;
await runService({
  name: ctx.name,
  logger: ctx.logger,
  // Until the brokers accept the TLS/SASL settings: /readyz 503 and one log line naming the cause.
  waitFor: waitForKafka(ctx, port),
  start: () => createDeliverer(ctx, { port }).start(),
});
