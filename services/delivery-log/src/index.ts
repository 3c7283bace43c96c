export { createDeliveryLog, type DeliveryLogService } from './service.ts';
export { openDatabase, type Sql } from './adapters/db/database.ts';
export { migrate } from './adapters/db/migrations.ts';
export { LogStore } from './adapters/db/store.ts';
export { Pruner } from './adapters/db/pruner.ts';
export { DeliveryLogMetrics } from './metrics.ts';
export { RETENTION_PACING } from './constants.ts';
