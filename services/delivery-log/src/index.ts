export { createDeliveryLog, type DeliveryLogService } from './service.ts';
export { openDatabase, type Sql } from './adapters/database.ts';
export { migrate } from './adapters/migrations.ts';
export { LogStore } from './adapters/store.ts';
export { Pruner } from './adapters/pruner.ts';
export { DeliveryLogMetrics } from './metrics.ts';
export { RETENTION_PACING } from './constants.ts';
