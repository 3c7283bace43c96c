export { createDeliverer, type DelivererOptions, type DelivererService } from './service.ts';
export { webhookThreadSettings } from './config.ts';
export { AddressPolicy } from './domain/address-policy.ts';
export type { AttemptResult } from './domain/attempt-result.ts';
export { UndiciWebhookClient, type WebhookClient, type WebhookRequest } from './adapters/webhook-client.ts';
export { WebhookThread } from './adapters/webhook-thread.ts';
