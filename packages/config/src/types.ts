import type { EventFilter } from '@sluice/event-filter';
import type { SigningKey } from '@sluice/webhook-signature';
import type { DEFAULT_TOPICS } from './constants.ts';

/** One webhook endpoint after validation. */
export interface Endpoint {
  /** The URL requests go to, secrets resolved: never recorded or shown as it is. */
  url: string;
  /**
   * How records, logs and the delivery log name the endpoint (`sluice-endpoints`, attempts): its
   * URL redacted (`redactUrl`), with `#2`, `#3`… when an earlier endpoint of the destination
   * redacts to the same text.
   */
  ref: string;
  headers: Record<string, string>;
  /** Requests per second allowed to this endpoint; absent = no limit. */
  maxRequestsPerSecond?: number;
}

export interface Source {
  id: string;
  name: string;
  /** The tenant it belongs to (docs/reference/tenants.md); default `default`. */
  tenant: string;
  /** The write keys the config file gives, in clear (a runtime source has none: only their digests). */
  writeKeys: string[];
  /**
   * Write keys kept only as digests: a runtime source's keys in force, each the SHA-256 of the key
   * as 64 hex characters (`writeKeyDigest`, docs/reference/runtime-sources.md). Absent: none.
   */
  writeKeyDigests?: string[];
  rateLimit?: { perSecond: number; burst: number };
}

export interface Destination {
  id: string;
  name: string;
  /** The tenant it belongs to (docs/reference/tenants.md); default `default`. */
  tenant: string;
  type: 'webhooks';
  enabled: boolean;
  sourceIds: string[];
  /** The legacy `webhookUrl` first, then `webhooks[]` (docs/configuration.md); 1–5 entries. */
  endpoints: Endpoint[];
  sharedSecret?: string;
  signing: DestinationSigning;
  /** Many events per request (`batch`, docs/reference/batches.md); absent = one request per event. */
  batch?: BatchSettings;
  /** Which routed events the destination gets (`filter`, docs/reference/filters.md); absent = all of them. */
  filter?: EventFilter;
  /**
   * Per-user order (`ordering: "per-user"`, docs/reference/ordering.md); absent = `"none"`. What a
   * dead-lettered head does to the events waiting behind it (`orderingOnDeadLetter`, default `release`).
   */
  ordering?: { onDeadLetter: 'release' | 'dead-letter-waiting' };
}

/** `destinations[].batch`: a batch leaves when it holds `maxEvents`, when one more event would pass `maxBytes`, or `maxWaitMs` after its first event. */
export interface BatchSettings {
  /** Default 100, 1–1,000. */
  maxEvents: number;
  /** Bytes of the batch's body; default 1 MiB, 1 KiB–16 MiB. An event larger alone goes as a batch of one. */
  maxBytes: number;
  /** Default 50 ms, 1 ms–10 s. */
  maxWaitMs: number;
}

/** How a destination's requests are signed (docs/configuration.md, "Signing"). */
export interface DestinationSigning {
  /** Send `X-Signature` (hex HMAC-SHA1 of the body) when an X-Signature key is active. */
  xSignature: boolean;
  /** Send `webhook-id`, `webhook-timestamp`, `webhook-signature` when a Standard Webhooks key is active. */
  standardWebhooks: boolean;
  /** `settings.sharedSecret` (no bounds) first, then `signing.xSignature.secrets`; the newest active one signs. */
  xSignatureKeys: SigningKey[];
  /** `whsec_` secrets; every active one adds a signature. */
  standardWebhooksKeys: SigningKey[];
}

export type TopicNames = { [K in keyof typeof DEFAULT_TOPICS]: string };

/** TLS to the brokers, secrets resolved. The server certificate is always verified. */
export interface KafkaSsl {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  keyPassword?: string;
}

/** OIDC client credentials for SASL/OAUTHBEARER. */
export interface KafkaOidc {
  tokenEndpoint: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
  caFile?: string;
}

export type KafkaSasl =
  | { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string }
  | { mechanism: 'oauthbearer'; tokenFile: string }
  | { mechanism: 'oauthbearer'; oidc: KafkaOidc };

/** How clients reach the brokers beyond their addresses: `kafka.ssl` and `kafka.sasl`. */
export interface KafkaSecurity {
  ssl?: KafkaSsl;
  sasl?: KafkaSasl;
}

/** The validated configuration with secrets resolved and durations in milliseconds. */
export interface SluiceConfig {
  sources: Source[];
  destinations: Destination[];
  kafka: {
    clientId: string;
    topics: TopicNames;
    partitions: number;
    replicationFactor: number;
    /** `kafka.startupTimeout`: how long start-up waits out retriable Kafka answers. */
    startupTimeoutMs: number;
  } & KafkaSecurity;
  ingest: {
    trustProxy: boolean;
    /** Continue the trace context a tracking request carries (default false: a new, linked trace). */
    trustTraceContext: boolean;
    adminToken?: string;
    lingerMs: number;
    requestTimeoutMs: number;
    headersTimeoutMs: number;
    produceTimeoutMs: number;
  };
  delivery: {
    timeoutMs: number;
    maxInFlightPerPartition: number;
    maxInFlightPerDestination: number;
    /** Bytes of ordering queues a deliverer holds in memory before it starts no new one. */
    orderingStateBytes: number;
    connectionsPerEndpoint: number;
    stallAfterMs: number;
    circuitBreaker: { failures: number; cooldownMs: number };
    caFile?: string;
    ssrf: { enabled: boolean; allowCidrs: string[] };
    /** `delivery.autoDisable.after` in ms; 0: off. */
    autoDisable: { afterMs: number };
  };
  retry: { windowMs: number; scheduleMs: number[]; jitter: number; tiersMs: number[] };
  deliveryLog: {
    databaseUrl?: string;
    dataDir?: string;
    retentionMs: number;
    pruneIntervalMs: number;
    maxInFlightBytes: number;
    maxSizeBytes?: number;
    adminToken?: string;
    /** `deliveryLog.trustedProxies`: the proxies whose `X-Forwarded-For` names the client; empty: none. */
    trustedProxies: string[];
    healthWindowMs: number;
    /** `deliveryLog.ledger`: grace past the retry window, and how often the gauges are computed (ms). */
    ledger: { graceMs: number; intervalMs: number };
  };
  /** Credentials and CA for the schema registry; absent: anonymous, system roots. */
  schemaRegistry?: SchemaRegistryAccess;
  /** Where operator events go; absent: none are sent. */
  operatorEvents?: OperatorEventsSettings;
  /** Destinations managed at runtime; absent: off (docs/reference/runtime-destinations.md). */
  runtimeDestinations?: RuntimeDestinationsSettings;
}

/**
 * `runtimeDestinations`: the keyring's keys as the file declares them, newest first. Only where each
 * key is read: the services read the keys themselves at start (`loadKeyring`), so no key is held in
 * the config.
 */
export interface RuntimeDestinationsSettings {
  keyring: { id: string; key: { env: string } | { file: string } }[];
}

/** `operatorEvents` with secrets resolved (docs/reference/operator-events.md). */
export interface OperatorEventsSettings {
  url: string;
  /** A `whsec_` Standard Webhooks secret. */
  secret: string;
  /** Dead letters per minute and destination above which a burst is reported; default 100. */
  deadLetterBurst: number;
  /** Consecutive events a destination's filter refused before it is reported; default 1,000. */
  filterRefusesAll: number;
  /** How far ahead of a signing secret's `notAfter` it is reported; default 24 h. */
  secretExpiryNoticeMs: number;
}

/** `schemaRegistry` with secrets resolved: Basic (`username`, `password`) or `bearerToken`, and a CA. */
export interface SchemaRegistryAccess {
  username?: string;
  password?: string;
  bearerToken?: string;
  caFile?: string;
}
