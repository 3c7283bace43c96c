import { loadServiceContext, runService, waitForKafka } from '@sluice/service-kit';
import { createAudienceSync } from './service.ts';

const ctx = loadServiceContext('audience-sync');
const port = ctx.env.ports.audienceSync;
await runService({
  name: ctx.name,
  logger: ctx.logger,
  // Until the brokers accept the TLS/SASL settings: /readyz 503 and one log line naming the cause.
  waitFor: waitForKafka(ctx, port),
  start: () => createAudienceSync(ctx, { port }).start(),
});
