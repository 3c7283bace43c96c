export { createAudienceSync } from './service.ts';
export type { AudienceSyncOptions, AudienceSyncService } from './service.ts';
