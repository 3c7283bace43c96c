import { loadServiceContext, runService } from '@sluice/service-kit';
import { createDeliverer } from './service.ts';

const ctx = loadServiceContext('deliverer');
await runService({
  name: ctx.name,
  logger: ctx.logger,
  start: () => createDeliverer(ctx, { port: ctx.env.ports.deliverer }).start(),
});
