export { createRetry } from './service.ts';
export type { RetryOptions, RetryService } from './service.ts';
