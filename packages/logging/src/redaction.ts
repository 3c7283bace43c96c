/**
 * Paths pino censors (SPEC §11, §12): secrets, write keys, the admin token and every
 * Authorization header never reach a log line, wherever they sit one or two levels deep.
 */
const SECRET_KEYS = [
  'authorization',
  'Authorization',
  'sharedSecret',
  'writeKey',
  'writeKeys',
  'adminToken',
  'password',
  'secret',
  'x-signature',
  'X-Signature',
  'cookie',
];

export const REDACT_PATHS: string[] = [
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((k) => `*.${k}`),
  ...SECRET_KEYS.map((k) => `*.*.${k}`),
  'req.headers.authorization',
  'headers.authorization',
  'config.sources[*].writeKeys',
  'config.destinations[*].sharedSecret',
  // Kafka credentials (docs/configuration.md, "Kafka security"), however deep the object logged.
  'clientSecret',
  'keyPassword',
  '*.clientSecret',
  '*.keyPassword',
  '*.*.clientSecret',
  '*.*.keyPassword',
  'config.kafka.sasl.password',
  'config.kafka.sasl.oidc.clientSecret',
  'config.kafka.ssl.keyPassword',
  'kafka.sasl.oidc.clientSecret',
  'security.sasl.oidc.clientSecret',
];
