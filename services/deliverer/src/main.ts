import { runKafkaService } from '@sluice/service-kit';
import { createDeliverer } from './service/deliverer.ts';

// Until the brokers accept the TLS/SASL settings: /readyz 503 and one log line naming the cause.
await runKafkaService(
  'deliverer',
  (ports) => ports.deliverer,
  (ctx, port) => createDeliverer(ctx, { port }).start(),
);
