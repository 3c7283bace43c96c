export { createDeliverer } from './service.ts';
export type { DelivererOptions, DelivererService } from './service.ts';
