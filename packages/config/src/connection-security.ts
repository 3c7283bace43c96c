import { ConfigError } from './errors.ts';
import { parseDuration } from './duration.ts';
import type { RawConfig } from './schema.ts';
import type { ResolveSecret } from './secrets.ts';
import type { KafkaSasl, KafkaSecurity, KafkaSsl, SchemaRegistryAccess, SluiceConfig } from './types.ts';

type RawKafka = RawConfig['kafka'];
type RawSasl = NonNullable<RawKafka['sasl']>;

/** Keys each SASL mechanism takes; any other key set under `kafka.sasl` is a mistake worth naming. */
const SASL_KEYS: Record<RawSasl['mechanism'], readonly string[]> = {
  plain: ['username', 'password'],
  'scram-sha-256': ['username', 'password'],
  'scram-sha-512': ['username', 'password'],
  oauthbearer: ['tokenFile', 'oidc'],
};

function resolveSsl(ssl: NonNullable<RawKafka['ssl']>, secret: ResolveSecret): KafkaSsl {
  if ((ssl.certFile === undefined) !== (ssl.keyFile === undefined)) {
    const missing = ssl.certFile === undefined ? 'certFile' : 'keyFile';
    throw new ConfigError(`kafka.ssl.${missing}`, 'is required for mutual TLS (certFile and keyFile go together)');
  }
  if (ssl.keyPassword !== undefined && ssl.keyFile === undefined) {
    throw new ConfigError('kafka.ssl.keyPassword', 'needs kafka.ssl.keyFile');
  }
  return {
    ...(ssl.caFile !== undefined && { caFile: ssl.caFile }),
    ...(ssl.certFile !== undefined && { certFile: ssl.certFile }),
    ...(ssl.keyFile !== undefined && { keyFile: ssl.keyFile }),
    ...(ssl.keyPassword !== undefined && { keyPassword: secret('kafka.ssl.keyPassword', ssl.keyPassword) }),
  };
}

/** Mechanisms whose credential crosses the wire as it is: only over TLS, or with `allowPlaintext`. */
const CLEAR_TEXT_MECHANISMS: readonly RawSasl['mechanism'][] = ['plain', 'oauthbearer'];

function resolveSasl(sasl: RawSasl, tls: boolean, secret: ResolveSecret): KafkaSasl {
  const allowed = SASL_KEYS[sasl.mechanism];
  for (const key of Object.keys(sasl)) {
    if (key !== 'mechanism' && key !== 'allowPlaintext' && !allowed.includes(key)) {
      throw new ConfigError(
        `kafka.sasl.${key}`,
        `does not apply to mechanism ${sasl.mechanism} (it takes ${allowed.join(', ')})`,
      );
    }
  }
  if (!tls && CLEAR_TEXT_MECHANISMS.includes(sasl.mechanism) && sasl.allowPlaintext !== true) {
    const what = sasl.mechanism === 'plain' ? 'the password' : 'the token';
    throw new ConfigError(
      'kafka.ssl',
      `is required with SASL mechanism ${sasl.mechanism}: without TLS ${what} travels in clear ` +
        '(for a plaintext listener on a trusted network, set kafka.sasl.allowPlaintext: true)',
    );
  }
  if (sasl.mechanism !== 'oauthbearer') {
    if (sasl.username === undefined)
      throw new ConfigError('kafka.sasl.username', `is required for mechanism ${sasl.mechanism}`);
    if (sasl.password === undefined)
      throw new ConfigError('kafka.sasl.password', `is required for mechanism ${sasl.mechanism}`);
    return {
      mechanism: sasl.mechanism,
      username: sasl.username,
      password: secret('kafka.sasl.password', sasl.password),
    };
  }
  if ((sasl.tokenFile === undefined) === (sasl.oidc === undefined)) {
    throw new ConfigError('kafka.sasl', 'mechanism oauthbearer takes exactly one of tokenFile or oidc');
  }
  if (sasl.tokenFile !== undefined) return { mechanism: 'oauthbearer', tokenFile: sasl.tokenFile };
  const oidc = sasl.oidc!;
  let url: URL;
  try {
    url = new URL(oidc.tokenEndpoint);
  } catch {
    throw new ConfigError(
      'kafka.sasl.oidc.tokenEndpoint',
      `must be a full https URL, got ${JSON.stringify(oidc.tokenEndpoint)}`,
    );
  }
  if (url.protocol !== 'https:') {
    throw new ConfigError(
      'kafka.sasl.oidc.tokenEndpoint',
      `must use https (the client secret is sent to it), got ${url.protocol}`,
    );
  }
  return {
    mechanism: 'oauthbearer',
    oidc: {
      tokenEndpoint: oidc.tokenEndpoint,
      clientId: oidc.clientId,
      clientSecret: secret('kafka.sasl.oidc.clientSecret', oidc.clientSecret),
      ...(oidc.scope !== undefined && { scope: oidc.scope }),
      ...(oidc.caFile !== undefined && { caFile: oidc.caFile }),
    },
  };
}

/** The `schemaRegistry` section checked (Basic or bearer, not both) with its secrets resolved. */
export function resolveSchemaRegistry(
  raw: RawConfig['schemaRegistry'],
  secret: ResolveSecret,
): SchemaRegistryAccess | undefined {
  if (raw === undefined) return undefined;
  if (raw.bearerToken !== undefined && (raw.username !== undefined || raw.password !== undefined)) {
    throw new ConfigError('schemaRegistry.bearerToken', 'takes the place of username/password: set one or the other');
  }
  if ((raw.username === undefined) !== (raw.password === undefined)) {
    throw new ConfigError(
      raw.username === undefined ? 'schemaRegistry.username' : 'schemaRegistry.password',
      'username and password go together',
    );
  }
  return {
    ...(raw.username !== undefined && {
      username: raw.username,
      password: secret('schemaRegistry.password', raw.password!),
    }),
    ...(raw.bearerToken !== undefined && { bearerToken: secret('schemaRegistry.bearerToken', raw.bearerToken) }),
    ...(raw.caFile !== undefined && { caFile: raw.caFile }),
  };
}

/** The `kafka` section with its security settings checked and their secrets resolved. */
export function resolveKafkaSection(kafka: RawKafka, secret: ResolveSecret): SluiceConfig['kafka'] {
  const { ssl, sasl, startupTimeout, ...rest } = kafka;
  const security: KafkaSecurity = {
    ...(ssl !== undefined && { ssl: resolveSsl(ssl, secret) }),
    ...(sasl !== undefined && { sasl: resolveSasl(sasl, ssl !== undefined, secret) }),
  };
  return {
    ...(rest as Omit<SluiceConfig['kafka'], keyof KafkaSecurity | 'startupTimeoutMs'>),
    startupTimeoutMs: parseDuration(startupTimeout),
    ...security,
  };
}

/**
 * Warnings a service logs at start about the config in force: SASL `plain` or `oauthbearer`
 * without TLS (only possible with `kafka.sasl.allowPlaintext`).
 */
export function transportWarnings(config: Pick<SluiceConfig, 'kafka'>): string[] {
  const { ssl, sasl } = config.kafka;
  if (ssl !== undefined || sasl === undefined || !CLEAR_TEXT_MECHANISMS.includes(sasl.mechanism)) return [];
  return [`kafka.sasl.allowPlaintext: SASL ${sasl.mechanism} without TLS; its credentials cross the network in clear`];
}
