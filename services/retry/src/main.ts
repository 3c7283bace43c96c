import { loadServiceContext, runService, waitForKafka } from '@sluice/service-kit';
import { createRetry } from './service.ts';

const ctx = loadServiceContext('retry');
const port = ctx.env.ports.retry;
await runService({
  name: ctx.name,
  logger: ctx.logger,
  // Until the brokers accept the TLS/SASL settings: /readyz 503 and one log line naming the cause.
  waitFor: waitForKafka(ctx, port),
  start: () => createRetry(ctx, { port }).start(),
});
