import { fileURLToPath } from 'node:url';
import { DEFAULT_PORTS } from './constants.ts';
import { ConfigError } from './errors.ts';

/**
 * The bundled local demo config used by `npm start` when `SLUICE_CONFIG` is not set
 * (docs/reference/operating-interface.md).
 */
export const DEMO_CONFIG_PATH = fileURLToPath(new URL('../../../config/local.yaml', import.meta.url));

/**
 * Everything Sluice reads from the environment (docs/reference/operating-interface.md). No other module reads
 * `process.env`.
 */
export interface SluiceEnv {
  /** `KAFKA_BROKERS`, comma-separated; undefined means "provision a local broker" where that applies. */
  kafkaBrokers?: string[];
  /** `SLUICE_CONFIG`: path of the config file. */
  configPath?: string;
  /** `SCHEMA_REGISTRY_URL`: turns on the Confluent wire format. */
  schemaRegistryUrl?: string;
  /** `DATABASE_URL`: the delivery log's PostgreSQL, unless `deliveryLog.databaseUrl` names one. */
  databaseUrl?: string;
  /** `LOG_LEVEL`, default `info`. */
  logLevel: string;
  ports: {
    ingest: number;
    deliverer: number;
    retry: number;
    audienceSync: number;
    deliveryLog: number;
    ingestAdmin?: number;
  };
  /** The raw environment, for resolving `{ env: NAME }` secrets. */
  raw: NodeJS.ProcessEnv;
}

function port(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new ConfigError(name, `must be a port number, got ${JSON.stringify(value)}`, 'environment');
  return n;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function readEnv(env: NodeJS.ProcessEnv = process.env): SluiceEnv {
  const brokers = env.KAFKA_BROKERS?.split(',')
    .map((b) => b.trim())
    .filter(Boolean);
  const logLevel = env.LOG_LEVEL ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`, 'environment');
  }
  return {
    ...(brokers && brokers.length > 0 && { kafkaBrokers: brokers }),
    ...(env.SLUICE_CONFIG && { configPath: env.SLUICE_CONFIG }),
    ...(env.SCHEMA_REGISTRY_URL && { schemaRegistryUrl: env.SCHEMA_REGISTRY_URL }),
    ...(env.DATABASE_URL && { databaseUrl: env.DATABASE_URL }),
    logLevel,
    ports: {
      ingest: port(env, 'INGEST_PORT', DEFAULT_PORTS.ingest),
      deliverer: port(env, 'DELIVERER_PORT', DEFAULT_PORTS.deliverer),
      retry: port(env, 'RETRY_PORT', DEFAULT_PORTS.retry),
      audienceSync: port(env, 'AUDIENCE_SYNC_PORT', DEFAULT_PORTS.audienceSync),
      deliveryLog: port(env, 'DELIVERY_LOG_PORT', DEFAULT_PORTS.deliveryLog),
      // Unset: ingest serves /metrics on INGEST_PORT too (docs/reference/operating-interface.md).
      ...(env.INGEST_ADMIN_PORT && { ingestAdmin: port(env, 'INGEST_ADMIN_PORT', 0) }),
    },
    raw: env,
  };
}

/** Brokers for a service: required, with an error naming the variable. */
export function requireBrokers(env: SluiceEnv): string[] {
  if (!env.kafkaBrokers)
    throw new ConfigError('KAFKA_BROKERS', 'is required (comma-separated host:port list)', 'environment');
  return env.kafkaBrokers;
}

/** Config path for a service: required, with an error naming the variable. */
export function requireConfigPath(env: SluiceEnv): string {
  if (!env.configPath)
    throw new ConfigError('SLUICE_CONFIG', 'is required (path of the YAML or JSON config file)', 'environment');
  return env.configPath;
}
