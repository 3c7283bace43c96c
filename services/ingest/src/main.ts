import { loadServiceContext, runService, waitForKafka } from '@sluice/service-kit';
import { createIngest } from './service.ts';

const ctx = loadServiceContext('ingest');
const port = ctx.env.ports.ingest;
await runService({
  name: ctx.name,
  logger: ctx.logger,
  // Until the brokers accept the TLS/SASL settings: /readyz 503 and one log line naming the cause.
  waitFor: waitForKafka(ctx, port),
  start: () => createIngest(ctx, { port, adminPort: ctx.env.ports.ingestAdmin }).start(),
});
