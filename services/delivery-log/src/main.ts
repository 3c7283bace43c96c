import { runKafkaService } from '@sluice/service-kit';
import { createDeliveryLog } from './service.ts';

// Until the brokers accept the TLS/SASL settings: /readyz 503 and one log line naming the cause.
await runKafkaService(
  'delivery-log',
  (ports) => ports.deliveryLog,
  (ctx, port) => createDeliveryLog(ctx, { port }).start(),
);
