export { DEMO_RECEIVER_HOST, DEMO_RECEIVER_PATH, DEMO_RECEIVER_PORT } from './constants.ts';
export { findDemoTarget } from './demo-target.ts';
export type { DemoTarget } from './demo-target.ts';
export { startDemoReceiver } from './receiver.ts';
export type { DemoReceiver, DemoReceiverOptions } from './receiver.ts';
export { checkWebhook, formatWebhookLine } from './webhook-line.ts';
export type { WebhookCheck } from './webhook-line.ts';
