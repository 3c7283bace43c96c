/**
 * Paths pino censors (docs/reference/observability.md, security.md): secrets, write keys, the admin token and every
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
  'webhook-signature',
];

export const REDACT_PATHS: string[] = [
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((k) => `*.${k}`),
  ...SECRET_KEYS.map((k) => `*.*.${k}`),
  'req.headers.authorization',
  'headers.authorization',
  'config.sources[*].writeKeys',
  'config.destinations[*].sharedSecret',
  // Signing secrets and endpoint credentials (URL, header values) of a validated config (a
  // destination logged alone, or the whole config).
  ...['destinations[*]', 'config.destinations[*]'].flatMap((d) => [
    `${d}.signing.xSignatureKeys[*].secret`,
    `${d}.signing.standardWebhooksKeys[*].secret`,
    `${d}.endpoints[*].url`,
    `${d}.endpoints[*].headers`,
  ]),
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
