import { loadServiceContext, runService, waitForKafka } from '@sluice/service-kit';
import { createDeliveryLog } from './service.ts';

const ctx = loadServiceContext('delivery-log');
const port = ctx.env.ports.deliveryLog;
await runService({
  name: ctx.name,
  logger: ctx.logger,
  // Until the brokers accept the TLS/SASL settings: /readyz 503 and one log line naming the cause.
  waitFor: waitForKafka(ctx, port),
  start: () => createDeliveryLog(ctx, { port }).start(),
});
