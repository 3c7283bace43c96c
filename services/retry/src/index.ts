export { createRetry, type RetryOptions, type RetryService } from './service.ts';
