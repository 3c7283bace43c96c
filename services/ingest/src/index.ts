export { createIngest } from './service.ts';
export type { IngestOptions, IngestService } from './service.ts';
