import { runKafkaService } from '@sluice/service-kit';
import { createAudienceSync } from './service.ts';

// Until the brokers accept the TLS/SASL settings: /readyz 503 and one log line naming the cause.
await runKafkaService(
  'audience-sync',
  (ports) => ports.audienceSync,
  (ctx, port) => createAudienceSync(ctx, { port }).start(),
);
