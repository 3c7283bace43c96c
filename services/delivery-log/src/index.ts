export { createDeliveryLog } from './service.ts';
export type { DeliveryLogOptions, DeliveryLogService } from './service.ts';
export { openDatabase } from './adapters/database.ts';
export type { DatabaseSettings, Sql } from './adapters/database.ts';
export { migrate } from './adapters/migrations.ts';
export { LogStore } from './adapters/store.ts';
export { openApiDocument } from './adapters/openapi.ts';
