import { Type, type Static } from '@sinclair/typebox';
import {
  AUTO_DISABLE_AFTER_DEFAULT,
  BATCH_BOUNDS,
  BATCH_DEFAULTS,
  DEFAULT_TENANT,
  DEFAULT_BACKOFF,
  DEFAULT_DELAY_TIERS,
  DEFAULT_TOPICS,
  KEYRING_KEY_ID_PATTERN,
  LIMITS,
  OPERATOR_EVENT_DEFAULTS,
} from './constants.ts';
import { DURATION_PATTERN } from './duration.ts';
import { SigningSchema } from './signing-schema.ts';

const EnvRef = Type.Object({ env: Type.String({ minLength: 1 }) }, { additionalProperties: false });
const FileRef = Type.Object({ file: Type.String({ minLength: 1 }) }, { additionalProperties: false });

/**
 * A secret: a literal string, `{ "env": "NAME" }` read from the environment, or `{ "file": "PATH" }`
 * read from a file, when the config is loaded (docs/configuration.md, "Secrets").
 */
export const SecretSchema = Type.Union([Type.String({ minLength: 1 }), EnvRef, FileRef]);

/** A header value: like a secret, but a literal may be empty. */
const HeaderValueSchema = Type.Union([Type.String(), EnvRef, FileRef]);

const Duration = (defaultValue: string) =>
  Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: DURATION_PATTERN })], { default: defaultValue });

const Id = Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9._-]+$' });

/** The tenant a source or destination belongs to (docs/reference/tenants.md): an id, `default` when none is named. */
export const TenantSchema = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9._-]+$',
  default: DEFAULT_TENANT,
});

export const EndpointSchema = Type.Object(
  {
    /** The whole URL, or a secret holding it (for credentials in its userinfo, query or path). */
    url: SecretSchema,
    headers: Type.Optional(Type.Record(Type.String(), HeaderValueSchema)),
    /** Optional cap on requests per second to this endpoint; events over it are deferred. */
    maxRequestsPerSecond: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
  },
  { additionalProperties: false },
);

export const SourceSchema = Type.Object(
  {
    id: Id,
    name: Type.String({ default: '' }),
    tenant: TenantSchema,
    writeKeys: Type.Array(SecretSchema, { minItems: 1 }),
    /** Optional token-bucket rate limit on ingest for this source (calls per second). */
    rateLimit: Type.Optional(
      Type.Object(
        {
          perSecond: Type.Number({ exclusiveMinimum: 0 }),
          burst: Type.Optional(Type.Integer({ minimum: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/**
 * `destinations[].batch`: many events per request (docs/reference/batches.md). Absent = one request
 * per event. `maxWait`'s bounds are checked with the other cross-field rules (`semantic-checks.ts`).
 */
export const BatchSchema = Type.Object(
  {
    maxEvents: Type.Integer({
      minimum: BATCH_BOUNDS.maxEvents.min,
      maximum: BATCH_BOUNDS.maxEvents.max,
      default: BATCH_DEFAULTS.maxEvents,
    }),
    maxBytes: Type.Integer({
      minimum: BATCH_BOUNDS.maxBytes.min,
      maximum: BATCH_BOUNDS.maxBytes.max,
      default: BATCH_DEFAULTS.maxBytes,
    }),
    maxWait: Duration(BATCH_DEFAULTS.maxWait),
  },
  { additionalProperties: false },
);

/**
 * `destinations[].filter`: which events the destination gets (docs/reference/filters.md). The shape
 * is checked here; the conditions, their operators and limits by `parseFilter` (`@sluice/event-filter`).
 */
export const FilterSchema = Type.Object(
  {
    types: Type.Optional(Type.Array(Type.String())),
    events: Type.Optional(Type.Array(Type.String())),
    where: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

/**
 * `destinations[].ordering` and `orderingOnDeadLetter` (docs/reference/ordering.md): a user's events
 * attempted in acceptance order, and what a dead-lettered head does to the events waiting behind it.
 */
export const OrderingSchema = Type.Union([Type.Literal('per-user'), Type.Literal('none')], { default: 'none' });
export const OrderingOnDeadLetterSchema = Type.Union([Type.Literal('release'), Type.Literal('dead-letter-waiting')], {
  default: 'release',
});

export const DestinationSchema = Type.Object(
  {
    id: Id,
    name: Type.String({ default: 'Webhooks' }),
    tenant: TenantSchema,
    type: Type.Literal('webhooks'),
    enabled: Type.Boolean({ default: true }),
    sourceIds: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
    settings: Type.Object(
      {
        webhooks: Type.Array(EndpointSchema, { default: [] }),
        webhookUrl: Type.Optional(SecretSchema),
        sharedSecret: Type.Optional(SecretSchema),
        signing: SigningSchema,
      },
      { additionalProperties: false, default: {} },
    ),
    batch: Type.Optional(BatchSchema),
    filter: Type.Optional(FilterSchema),
    ordering: OrderingSchema,
    orderingOnDeadLetter: OrderingOnDeadLetterSchema,
  },
  { additionalProperties: false },
);

/** TLS to the brokers (docs/configuration.md, "Kafka security"). The server certificate is always verified. */
export const KafkaSslSchema = Type.Object(
  {
    /** PEM CA bundle trusted for the brokers' certificates instead of the system roots. */
    caFile: Type.Optional(Type.String({ minLength: 1 })),
    /** PEM client certificate (chain) for mutual TLS; needs `keyFile`. */
    certFile: Type.Optional(Type.String({ minLength: 1 })),
    /** PEM private key of the client certificate. */
    keyFile: Type.Optional(Type.String({ minLength: 1 })),
    /** Passphrase of an encrypted `keyFile`. */
    keyPassword: Type.Optional(SecretSchema),
  },
  { additionalProperties: false },
);

/** SASL authentication to the brokers; which keys apply depends on `mechanism`. */
export const KafkaSaslSchema = Type.Object(
  {
    mechanism: Type.Unsafe<'plain' | 'scram-sha-256' | 'scram-sha-512' | 'oauthbearer'>({
      type: 'string',
      enum: ['plain', 'scram-sha-256', 'scram-sha-512', 'oauthbearer'],
    }),
    username: Type.Optional(Type.String({ minLength: 1 })),
    password: Type.Optional(SecretSchema),
    /**
     * Allow `plain` or `oauthbearer` without `kafka.ssl` (a plaintext listener: the password or
     * token travels in clear). Default false; when set, each service logs a warning at start.
     */
    allowPlaintext: Type.Optional(Type.Boolean()),
    /** oauthbearer: a file holding the token, read again at every authentication. */
    tokenFile: Type.Optional(Type.String({ minLength: 1 })),
    /** oauthbearer: OIDC client credentials, exchanged for a token at the token endpoint. */
    oidc: Type.Optional(
      Type.Object(
        {
          tokenEndpoint: Type.String({ minLength: 1 }),
          clientId: Type.String({ minLength: 1 }),
          clientSecret: SecretSchema,
          scope: Type.Optional(Type.String({ minLength: 1 })),
          /** PEM CA bundle trusted for the token endpoint instead of the system roots. */
          caFile: Type.Optional(Type.String({ minLength: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** One key of the runtime destinations' keyring: its id, and where its 32 bytes are read (never the config itself). */
const KeyringKeySchema = Type.Object(
  { id: Type.String({ pattern: KEYRING_KEY_ID_PATTERN }), key: Type.Union([EnvRef, FileRef]) },
  { additionalProperties: false },
);

const topicDefaults = Object.fromEntries(
  Object.entries(DEFAULT_TOPICS).map(([k, v]) => [k, Type.String({ minLength: 1, default: v })]),
) as { [K in keyof typeof DEFAULT_TOPICS]: ReturnType<typeof Type.String> };

export const ConfigSchema = Type.Object(
  {
    sources: Type.Array(SourceSchema, { default: [] }),
    destinations: Type.Array(DestinationSchema, { default: [] }),
    kafka: Type.Object(
      {
        clientId: Type.String({ default: 'sluice' }),
        topics: Type.Object(topicDefaults, { additionalProperties: false, default: {} }),
        /** Partitions of topics the services create. */
        partitions: Type.Integer({ minimum: 1, default: 6 }),
        /** Replication factor of created topics; -1 means the broker's default. */
        replicationFactor: Type.Integer({ minimum: -1, default: -1 }),
        /**
         * How long a service's start-up waits out retriable Kafka answers (a partition without a
         * leader, a coordinator loading, a timeout) before it gives up and exits 1 (docs/operations.md).
         */
        startupTimeout: Duration('5m'),
        /** TLS to the brokers; absent means plaintext. */
        ssl: Type.Optional(KafkaSslSchema),
        /** SASL authentication; absent means none. */
        sasl: Type.Optional(KafkaSaslSchema),
      },
      { additionalProperties: false, default: {} },
    ),
    ingest: Type.Object(
      {
        /** Take `context.ip` from the first `X-Forwarded-For` hop. */
        trustProxy: Type.Boolean({ default: false }),
        /**
         * Continue a caller's W3C trace context (`traceparent`, `tracestate`). Off: each call starts a
         * trace of its own, linked to the caller's, so a caller with a write key decides neither
         * sampling nor the trace Sluice's spans join (docs/reference/observability.md, "Tracing").
         */
        trustTraceContext: Type.Boolean({ default: false }),
        /** Token for the admin API (`POST /v1/deletions`). Without it the admin API answers 404. */
        adminToken: Type.Optional(SecretSchema),
        /** How long calls from concurrent requests are gathered before one `sendBatch`. */
        linger: Duration('2ms'),
        /** Request, header and keep-alive timeouts of the HTTP server. */
        requestTimeout: Duration('30s'),
        headersTimeout: Duration('10s'),
        /** How long a request waits for Kafka before answering 503. */
        produceTimeout: Duration('8s'),
      },
      { additionalProperties: false, default: {} },
    ),
    delivery: Type.Object(
      {
        /** One deadline for connect + response of each webhook request (docs/reference/delivery.md). */
        timeout: Duration('5s'),
        /** Events handled at once per partition. */
        maxInFlightPerPartition: Type.Integer({ minimum: 1, default: 128 }),
        /** Bytes of the per-user ordering queues a deliverer holds in memory; no new queue starts past it (docs/reference/ordering.md). */
        orderingStateBytes: Type.Integer({ minimum: 0, default: 64 * 1024 * 1024 }),
        /** Requests in flight at once per destination, across its endpoints. */
        maxInFlightPerDestination: Type.Integer({ minimum: 1, default: 256 }),
        /** Keep-alive connections per endpoint origin. */
        connectionsPerEndpoint: Type.Integer({ minimum: 1, default: 32 }),
        /** A destination whose in-flight cap is full and none of whose requests finished this long is stalled. */
        stallAfter: Duration('250ms'),
        /** Per-endpoint circuit breaker on timeouts and connection failures. */
        circuitBreaker: Type.Object(
          {
            failures: Type.Integer({ minimum: 1, default: 5 }),
            cooldown: Duration('30s'),
          },
          { additionalProperties: false, default: {} },
        ),
        /** Extra PEM CA bundle trusted besides the system roots (private CAs). */
        caFile: Type.Optional(Type.String({ minLength: 1 })),
        /** Disable an endpoint with no 2xx for `after` while attempts were made (docs/reference/destination-actions.md). */
        autoDisable: Type.Object(
          {
            after: Type.Union(
              [Type.Integer({ minimum: 0 }), Type.String({ pattern: DURATION_PATTERN }), Type.Literal('off')],
              {
                default: AUTO_DISABLE_AFTER_DEFAULT,
              },
            ),
          },
          { additionalProperties: false, default: {} },
        ),
        ssrf: Type.Object(
          {
            enabled: Type.Boolean({ default: true }),
            /** CIDRs exempt from the guard, e.g. `127.0.0.0/8` for local demos. */
            allowCidrs: Type.Array(Type.String(), { default: [] }),
          },
          { additionalProperties: false, default: {} },
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    /** Credentials and CA for the registry at `SCHEMA_REGISTRY_URL` (docs/configuration.md). */
    schemaRegistry: Type.Optional(
      Type.Object(
        {
          username: Type.Optional(Type.String({ minLength: 1 })),
          password: Type.Optional(SecretSchema),
          bearerToken: Type.Optional(SecretSchema),
          caFile: Type.Optional(Type.String({ minLength: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
    retry: Type.Object(
      {
        /** Retries stop this long after the first attempt (docs/reference/retries.md). */
        window: Duration('4h'),
        /** Wait before each retry; the last entry repeats. */
        schedule: Type.Array(Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: DURATION_PATTERN })]), {
          minItems: 1,
          default: [...DEFAULT_BACKOFF],
        }),
        /** Relative jitter applied to each wait (0.1 = ±10 %). */
        jitter: Type.Number({ minimum: 0, maximum: 1, default: 0.1 }),
        /** Delay tiers, one topic each. */
        tiers: Type.Array(Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: DURATION_PATTERN })]), {
          minItems: 1,
          default: [...DEFAULT_DELAY_TIERS],
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    /** Signed webhooks to the operator about destination control (docs/reference/operator-events.md). */
    operatorEvents: Type.Optional(
      Type.Object(
        {
          /** Where the events are POSTed; a secret, as it may hold credentials. */
          url: SecretSchema,
          /** The Standard Webhooks `whsec_` secret that signs them. */
          secret: SecretSchema,
          deadLetterBurst: Type.Integer({ minimum: 1, default: OPERATOR_EVENT_DEFAULTS.deadLetterBurst }),
          filterRefusesAll: Type.Integer({ minimum: 1, default: OPERATOR_EVENT_DEFAULTS.filterRefusesAll }),
          secretExpiryNotice: Duration(OPERATOR_EVENT_DEFAULTS.secretExpiryNotice),
        },
        { additionalProperties: false },
      ),
    ),
    /**
     * Destinations managed at runtime (docs/reference/runtime-destinations.md); absent: off. The
     * keyring encrypts their secrets, newest key first (it encrypts; the others still decrypt).
     */
    runtimeDestinations: Type.Optional(
      Type.Object({ keyring: Type.Array(KeyringKeySchema, { minItems: 1 }) }, { additionalProperties: false }),
    ),
    /** The delivery log (docs/delivery-log.md). */
    deliveryLog: Type.Object(
      {
        /** PostgreSQL URL; without it the embedded database (PGlite) is used. */
        databaseUrl: Type.Optional(SecretSchema),
        /** Data directory of the embedded database; without it the embedded database lives in memory. */
        dataDir: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
        /** Messages older than this are pruned. */
        retention: Duration('336h'),
        /** How often the pruning job runs. */
        pruneInterval: Duration('10m'),
        /** Bytes of records (key + value) being ingested at once; bounds the service's memory. */
        maxInFlightBytes: Type.Integer({ minimum: 65_536, default: 16 * 1024 * 1024 }),
        /**
         * Size cap of the log's tables in bytes: over it the oldest messages are evicted. Absent: 192 MiB
         * for the embedded database, none for PostgreSQL; 0: no cap.
         */
        maxSizeBytes: Type.Optional(Type.Integer({ minimum: 0 })),
        /** Bearer token of the API and the console. Without it the API answers 404. */
        adminToken: Type.Optional(SecretSchema),
        /**
         * Proxies (CIDRs, single addresses, or `loopback`/`linklocal`/`uniquelocal`) whose
         * `X-Forwarded-For` names the client that failed authentications are counted against
         * (docs/reference/tokens.md); none by default: the connection's address is the client.
         */
        trustedProxies: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { default: [], maxItems: 100 }),
        /** Window of the endpoint-health figures. */
        healthWindow: Duration('1h'),
        /** The live ledger (docs/delivery-log.md, "Ledger"). */
        ledger: Type.Object(
          {
            /** Time past `retry.window` after which an unsettled delivery is unaccounted. */
            grace: Duration('15m'),
            /** How often the ledger's gauges are computed. */
            interval: Duration('30s'),
          },
          { additionalProperties: false, default: {} },
        ),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

export type RawConfig = Static<typeof ConfigSchema>;
export const CONFIG_LIMITS = LIMITS;
