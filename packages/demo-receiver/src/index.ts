export { DEMO_RECEIVER_HOST, DEMO_RECEIVER_PATH, DEMO_RECEIVER_PORT } from './constants.ts';
export { findDemoTarget, type DemoTarget } from './demo-target.ts';
export { startDemoReceiver, type DemoReceiver, type DemoReceiverOptions } from './receiver.ts';
export { checkWebhook, formatWebhookLine, type WebhookCheck } from './webhook-line.ts';
