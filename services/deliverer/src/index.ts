export { createDeliverer, type DelivererOptions, type DelivererService } from './service/deliverer.ts';
export { webhookThreadSettings } from './service/config.ts';
export { AddressPolicy } from '@sluice/webhook';
export type { AttemptResult } from './transport/attempt-result.ts';
export { UndiciWebhookClient, type WebhookClient, type WebhookRequest } from './transport/webhook-client.ts';
export { WebhookThread } from './transport/webhook-thread.ts';
