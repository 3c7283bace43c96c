import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from './errors.ts';
import { parseDuration } from './duration.ts';
import { parseErrorProblem } from './parse-error.ts';
import { resolveKafkaSection, resolveSchemaRegistry } from './connection-security.ts';
import { resolveDestination } from './destination.ts';
import { ConfigSchema, type RawConfig } from './schema.ts';
import { ajv, schemaError } from './schema-errors.ts';
import { resolveOperatorEvents } from './operator-events.ts';
import { resolveBearerToken, secretResolver } from './secrets.ts';
import { checkSemantics } from './semantic-checks.ts';
import type { SluiceConfig } from './types.ts';

const validate = ajv.compile<RawConfig>(ConfigSchema);

/** Validates a parsed config object: schema with defaults, then cross-field rules. */
export function parseConfig(input: unknown, env: NodeJS.ProcessEnv = process.env): SluiceConfig {
  const raw = structuredClone(input ?? {}) as RawConfig;
  if (!validate(raw)) throw schemaError(validate.errors ?? []);
  checkSemantics(raw);
  const secret = secretResolver(env);
  return {
    sources: raw.sources.map((s, i) => ({
      id: s.id,
      name: s.name,
      tenant: s.tenant,
      writeKeys: s.writeKeys.map((k, j) => secret(`sources[${i}].writeKeys[${j}]`, k)),
      ...(s.rateLimit && {
        rateLimit: {
          perSecond: s.rateLimit.perSecond,
          burst: s.rateLimit.burst ?? Math.max(1, Math.ceil(s.rateLimit.perSecond)),
        },
      }),
    })),
    destinations: raw.destinations.map((d, i) => resolveDestination(d, `destinations[${i}]`, secret)),
    kafka: resolveKafkaSection(raw.kafka, secret),
    ingest: {
      trustProxy: raw.ingest.trustProxy,
      trustTraceContext: raw.ingest.trustTraceContext,
      ...(raw.ingest.adminToken !== undefined && {
        adminToken: resolveBearerToken(secret, 'ingest.adminToken', raw.ingest.adminToken),
      }),
      lingerMs: parseDuration(raw.ingest.linger),
      requestTimeoutMs: parseDuration(raw.ingest.requestTimeout),
      headersTimeoutMs: parseDuration(raw.ingest.headersTimeout),
      produceTimeoutMs: parseDuration(raw.ingest.produceTimeout),
    },
    delivery: {
      timeoutMs: parseDuration(raw.delivery.timeout),
      maxInFlightPerPartition: raw.delivery.maxInFlightPerPartition,
      maxInFlightPerDestination: raw.delivery.maxInFlightPerDestination,
      orderingStateBytes: raw.delivery.orderingStateBytes,
      connectionsPerEndpoint: raw.delivery.connectionsPerEndpoint,
      stallAfterMs: parseDuration(raw.delivery.stallAfter),
      circuitBreaker: {
        failures: raw.delivery.circuitBreaker.failures,
        cooldownMs: parseDuration(raw.delivery.circuitBreaker.cooldown),
      },
      ...(raw.delivery.caFile !== undefined && { caFile: raw.delivery.caFile }),
      ssrf: raw.delivery.ssrf,
      autoDisable: {
        afterMs: raw.delivery.autoDisable.after === 'off' ? 0 : parseDuration(raw.delivery.autoDisable.after),
      },
    },
    ...(raw.schemaRegistry !== undefined && { schemaRegistry: resolveSchemaRegistry(raw.schemaRegistry, secret) }),
    ...(raw.operatorEvents !== undefined && { operatorEvents: resolveOperatorEvents(raw.operatorEvents, secret) }),
    ...(raw.runtimeDestinations !== undefined && { runtimeDestinations: raw.runtimeDestinations }),
    retry: {
      windowMs: parseDuration(raw.retry.window),
      scheduleMs: raw.retry.schedule.map(parseDuration),
      jitter: raw.retry.jitter,
      tiersMs: [...new Set(raw.retry.tiers.map(parseDuration))].sort((a, b) => a - b),
    },
    deliveryLog: {
      ...(raw.deliveryLog.databaseUrl !== undefined && {
        databaseUrl: secret('deliveryLog.databaseUrl', raw.deliveryLog.databaseUrl),
      }),
      ...(raw.deliveryLog.dataDir !== undefined && { dataDir: raw.deliveryLog.dataDir }),
      retentionMs: parseDuration(raw.deliveryLog.retention),
      pruneIntervalMs: parseDuration(raw.deliveryLog.pruneInterval),
      maxInFlightBytes: raw.deliveryLog.maxInFlightBytes,
      ...(raw.deliveryLog.maxSizeBytes !== undefined && { maxSizeBytes: raw.deliveryLog.maxSizeBytes }),
      ...(raw.deliveryLog.adminToken !== undefined && {
        adminToken: resolveBearerToken(secret, 'deliveryLog.adminToken', raw.deliveryLog.adminToken),
      }),
      trustedProxies: raw.deliveryLog.trustedProxies,
      healthWindowMs: parseDuration(raw.deliveryLog.healthWindow),
      ledger: {
        graceMs: parseDuration(raw.deliveryLog.ledger.grace),
        intervalMs: parseDuration(raw.deliveryLog.ledger.interval),
      },
    },
  };
}

/** Reads and parses a YAML or JSON config file, without validating it. Errors name the file. */
export function readConfigFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError('(file)', `cannot read: ${(err as Error).message}`, path);
  }
  try {
    return extname(path) === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ConfigError('(file)', parseErrorProblem(extname(path) === '.json' ? 'JSON' : 'YAML', text, err), path);
  }
}

/** Reads and validates a YAML or JSON config file. Errors name the file and the field. */
export function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env): SluiceConfig {
  const parsed = readConfigFile(path);
  try {
    return parseConfig(parsed, env);
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigError(err.field, err.problem, path);
    throw err;
  }
}
