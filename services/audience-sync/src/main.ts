import { loadServiceContext, runService } from '@sluice/service-kit';
import { createAudienceSync } from './service.ts';

const ctx = loadServiceContext('audience-sync');
await runService({
  name: ctx.name,
  logger: ctx.logger,
  start: () => createAudienceSync(ctx, { port: ctx.env.ports.audienceSync }).start(),
});
