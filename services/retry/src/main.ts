import { loadServiceContext, runService } from '@sluice/service-kit';
import { createRetry } from './service.ts';

const ctx = loadServiceContext('retry');
await runService({
  name: ctx.name,
  logger: ctx.logger,
  start: () => createRetry(ctx, { port: ctx.env.ports.retry }).start(),
});
