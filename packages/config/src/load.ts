import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from './errors.ts';
import { DURATION_PATTERN, parseDuration } from './duration.ts';
import { fieldPath } from './field-path.ts';
import { parseErrorProblem } from './parse-error.ts';
import { resolveKafkaSection, resolveSchemaRegistry } from './connection-security.ts';
import { ConfigSchema, type RawConfig } from './schema.ts';
import { resolveEndpoints } from './endpoints.ts';
import { resolveOperatorEvents } from './operator-events.ts';
import { resolveFilter } from './filter.ts';
import { resolveBearerToken, secretResolver } from './secrets.ts';
import { checkSemantics } from './semantic-checks.ts';
import { resolveSigning } from './signing.ts';
import type { SluiceConfig } from './types.ts';

const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false });
const validate = ajv.compile<RawConfig>(ConfigSchema);
/** The keys of a secret given by reference (`{ env: NAME }`, `{ file: PATH }`). */
const SECRET_KEYS = ['env', 'file'];

function describe(error: ErrorObject): ConfigError {
  const p = error.params as Record<string, unknown>;
  if (error.keyword === 'required')
    return new ConfigError(fieldPath(error.instancePath, String(p.missingProperty)), 'is required');
  if (error.keyword === 'additionalProperties') {
    return new ConfigError(fieldPath(error.instancePath, String(p.additionalProperty)), 'is not a known setting');
  }
  return new ConfigError(fieldPath(error.instancePath), error.message ?? 'is invalid');
}

/** Validates a parsed config object: schema with defaults, then cross-field rules. */
export function parseConfig(input: unknown, env: NodeJS.ProcessEnv = process.env): SluiceConfig {
  const raw = structuredClone(input ?? {}) as RawConfig;
  if (!validate(raw)) {
    // Report the most specific error: anyOf/union failures list their branches first.
    const errors = validate.errors ?? [];
    const duration = errors.find(
      (e) => e.keyword === 'pattern' && (e.params as { pattern?: string }).pattern === DURATION_PATTERN,
    );
    if (duration) {
      throw new ConfigError(
        fieldPath(duration.instancePath),
        'must be a duration: milliseconds, or a string like 250ms, 5s, 2m, 4h',
      );
    }
    const secret = errors.find((e) => e.keyword === 'anyOf');
    if (
      secret &&
      errors.some((e) => {
        // A `{ env }` or `{ file }` branch of a secret's union: a key missing, or one too many.
        const p = e.params as { missingProperty?: string; additionalProperty?: string };
        return (
          e.instancePath === secret.instancePath &&
          SECRET_KEYS.includes(p.missingProperty ?? p.additionalProperty ?? '')
        );
      })
    ) {
      throw new ConfigError(
        fieldPath(secret.instancePath),
        'must be a non-empty string, { env: NAME } or { file: PATH }',
      );
    }
    const specific = errors.find((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf') ?? errors[0]!;
    throw describe(specific);
  }
  checkSemantics(raw);
  const secret = secretResolver(env);
  return {
    sources: raw.sources.map((s, i) => ({
      id: s.id,
      name: s.name,
      writeKeys: s.writeKeys.map((k, j) => secret(`sources[${i}].writeKeys[${j}]`, k)),
      ...(s.rateLimit && {
        rateLimit: {
          perSecond: s.rateLimit.perSecond,
          burst: s.rateLimit.burst ?? Math.max(1, Math.ceil(s.rateLimit.perSecond)),
        },
      }),
    })),
    destinations: raw.destinations.map((d, i) => ({
      id: d.id,
      name: d.name,
      type: d.type,
      enabled: d.enabled,
      sourceIds: d.sourceIds,
      endpoints: resolveEndpoints(d, `destinations[${i}]`, secret),
      ...(d.settings.sharedSecret !== undefined && {
        sharedSecret: secret(`destinations[${i}].settings.sharedSecret`, d.settings.sharedSecret),
      }),
      signing: resolveSigning(d, `destinations[${i}]`, secret),
      ...(d.batch !== undefined && {
        batch: { maxEvents: d.batch.maxEvents, maxBytes: d.batch.maxBytes, maxWaitMs: parseDuration(d.batch.maxWait) },
      }),
      ...(d.filter !== undefined && { filter: resolveFilter(d.filter, `destinations[${i}].filter`) }),
      ...(d.ordering === 'per-user' && { ordering: { onDeadLetter: d.orderingOnDeadLetter } }),
    })),
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
