export { createAudienceSync, type AudienceSyncOptions, type AudienceSyncService } from './service.ts';
export { snakeCase } from './domain/snake-case.ts';
export { identifyMessageId } from './domain/message-id.ts';
export { ROUTES as AUDIENCE_ROUTES } from './constants.ts';
