import { loadServiceContext, runService } from '@sluice/service-kit';
import { createDeliveryLog } from './service.ts';

const ctx = loadServiceContext('delivery-log');
await runService({
  name: ctx.name,
  logger: ctx.logger,
  start: () => createDeliveryLog(ctx, { port: ctx.env.ports.deliveryLog }).start(),
});
