export { createDeliveryLog, type DeliveryLogOptions, type DeliveryLogService } from './service.ts';
export { openDatabase, type DatabaseSettings, type Sql } from './adapters/database.ts';
export { migrate } from './adapters/migrations.ts';
export { LogStore } from './adapters/store.ts';
export { openApiDocument } from './adapters/openapi.ts';
