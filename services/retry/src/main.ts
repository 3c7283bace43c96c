import { runKafkaService } from '@sluice/service-kit';
import { createRetry } from './service.ts';

// Until the brokers accept the TLS/SASL settings: /readyz 503 and one log line naming the cause.
await runKafkaService(
  'retry',
  (ports) => ports.retry,
  (ctx, port) => createRetry(ctx, { port }).start(),
);
