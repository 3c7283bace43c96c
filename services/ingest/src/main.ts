import { runKafkaService } from '@sluice/service-kit';
import { createIngest } from './service.ts';

// Until the brokers accept the TLS/SASL settings: /readyz 503 and one log line naming the cause.
await runKafkaService(
  'ingest',
  (ports) => ports.ingest,
  (ctx, port) => createIngest(ctx, { port, adminPort: ctx.env.ports.ingestAdmin }).start(),
);
