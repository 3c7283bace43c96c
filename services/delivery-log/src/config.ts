import type { SluiceConfig, SluiceEnv } from '@sluice/config';
import { EMBEDDED_MAX_SIZE_BYTES, GROUP_SUFFIX } from './constants.ts';
import type { DatabaseSettings } from './adapters/db/database.ts';
import type { TopicRoles } from './domain/records.ts';

/**
 * The database: `deliveryLog.databaseUrl`, else `DATABASE_URL` from the environment, else the
 * embedded database (in `deliveryLog.dataDir`, or in memory).
 */
export function databaseSettings(config: SluiceConfig, env: SluiceEnv): DatabaseSettings {
  const url = config.deliveryLog.databaseUrl ?? env.databaseUrl;
  if (url !== undefined) return { url };
  return config.deliveryLog.dataDir !== undefined ? { dataDir: config.deliveryLog.dataDir } : {};
}

/**
 * One consumer group per database: a fresh database (a new instance id) starts a new group that
 * reads the topics from their beginning, which is how the log is rebuilt (docs/delivery-log.md).
 */
export function groupId(config: SluiceConfig, instanceId: string): string {
  return `${config.kafka.clientId}.${GROUP_SUFFIX}.${instanceId}`;
}

export function topicRoles(config: SluiceConfig): TopicRoles {
  const t = config.kafka.topics;
  return { events: t.events, attempts: t.attempts, deadLetter: t.deadLetter, rejected: t.rejected };
}

/**
 * Size cap of the log's tables (bytes; undefined: none): `deliveryLog.maxSizeBytes`, else 192 MiB
 * on the embedded database and none on PostgreSQL; 0 turns it off.
 */
export function maxSizeBytes(config: SluiceConfig, database: 'embedded' | 'postgres'): number | undefined {
  const cap = config.deliveryLog.maxSizeBytes ?? (database === 'embedded' ? EMBEDDED_MAX_SIZE_BYTES : 0);
  return cap > 0 ? cap : undefined;
}
