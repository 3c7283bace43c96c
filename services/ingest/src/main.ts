import { loadServiceContext, runService } from '@sluice/service-kit';
import { createIngest } from './service.ts';

const ctx = loadServiceContext('ingest');
await runService({
  name: ctx.name,
  logger: ctx.logger,
  start: () => createIngest(ctx, { port: ctx.env.ports.ingest, adminPort: ctx.env.ports.ingestAdmin }).start(),
});
