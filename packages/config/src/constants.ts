/** Default topic names (docs/reference/overview.md). All configurable under `kafka.topics`. */
/**
 * The destination id operator events' attempt records carry (`sluice.attempts`, the delivery log): no
 * configured destination may take it (or its `_` spelling, which names the same topics).
 */
export const OPERATOR_EVENTS_DESTINATION_ID = 'sluice.operator-events';

export const DEFAULT_TOPICS = {
  events: 'sluice.events',
  rejected: 'sluice.rejected',
  retry: 'sluice.retry',
  redeliver: 'sluice.redeliver',
  deadLetter: 'sluice.dead-letter',
  attempts: 'sluice.attempts',
  audiences: 'sluice.audiences',
  audienceState: 'sluice.audience-state',
  destinationState: 'sluice.destination-state',
  destinationActions: 'sluice.destination-actions',
  destinations: 'sluice.destinations',
  delayPrefix: 'sluice.delay.',
  parkedPrefix: 'sluice.parked.',
  ordering: 'sluice.ordering',
  waitingPrefix: 'sluice.waiting.',
} as const;

/** Backoff schedule (docs/reference/retries.md). */
export const DEFAULT_BACKOFF = ['10s', '30s', '1m', '2m', '5m', '10m', '20m', '30m', '60m'] as const;
/** Delay tiers (docs/reference/retries.md): one topic each, `<delayPrefix><tier>`. */
export const DEFAULT_DELAY_TIERS = ['10s', '30s', '1m', '2m', '5m', '10m', '20m', '30m', '60m'] as const;

/**
 * A keyring key's id (`runtimeDestinations.keyring[].id`): it is written in every ciphertext,
 * between dots, so it holds none (docs/reference/runtime-destinations.md, "Encryption").
 */
export const KEYRING_KEY_ID_PATTERN = '^[A-Za-z0-9_-]{1,64}$';

/** Limits that are fixed by the contract (not configurable) (docs/reference/limits.md). */
export const LIMITS = {
  endpointsPerDestination: 5,
  headersPerEndpoint: 20,
  callBytes: 32_000,
  batchBytes: 500_000,
  callsPerBatch: 2_500,
  responseBodyBytes: 64 * 1024,
  /**
   * Longest endpoint ref (the redacted URL, with `#n` when two redact alike): records, state keys,
   * the API's routes and the CLI name an endpoint by it, so a longer one is refused at config load.
   */
  endpointRefChars: 1_000,
} as const;

/**
 * Batched delivery (`destinations[].batch`, docs/reference/batches.md): the defaults and the bounds
 * each setting is held to.
 */
export const BATCH_DEFAULTS = { maxEvents: 100, maxBytes: 1024 * 1024, maxWait: '50ms' } as const;
export const BATCH_BOUNDS = {
  maxEvents: { min: 1, max: 1_000 },
  maxBytes: { min: 1024, max: 16 * 1024 * 1024 },
  maxWaitMs: { min: 1, max: 10_000 },
} as const;

/**
 * Header names a customer may not set on an endpoint (docs/configuration.md): Sluice sets them on
 * every request. Compared case-insensitively. Hop-by-hop names are refused too (`header-rules.ts`).
 */
export const RESERVED_HEADERS = [
  'content-type',
  'content-length',
  'host',
  'user-agent',
  'x-signature',
  'x-message-id',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
] as const;

/** Default ports (docs/reference/operating-interface.md), each overridable by its environment variable. */
export const DEFAULT_PORTS = {
  ingest: 8080,
  deliverer: 8081,
  retry: 8082,
  audienceSync: 8083,
  deliveryLog: 8084,
} as const;

/**
 * Destination control (docs/reference/destination-actions.md): an endpoint with no 2xx for this long
 * while attempts were made is disabled (`delivery.autoDisable.after`; `0` or `off` turns it off).
 */
export const AUTO_DISABLE_AFTER_DEFAULT = '72h';
/** Operator events (`operatorEvents`): their defaults. */
export const OPERATOR_EVENT_DEFAULTS = {
  /** More dead letters than this within one minute for one destination is a `destination.dead_letter_burst`. */
  deadLetterBurst: 100,
  /** A destination whose filter refused each of its last this many events is a `destination.filter_refuses_all`. */
  filterRefusesAll: 1_000,
  /** A signing secret whose `notAfter` is this close is a `signing_secret.expiring`. */
  secretExpiryNotice: '24h',
} as const;

/**
 * The tenant of a source or destination whose config names none (`tenant`, docs/reference/tenants.md):
 * a config without tenants keeps every source and destination in this one.
 */
export const DEFAULT_TENANT = 'default';

/**
 * Fewest characters of a bearer token that guards one of Sluice's own APIs (`ingest.adminToken`,
 * `deliveryLog.adminToken`): a shorter one is refused at load (docs/configuration.md, "Secrets").
 */
export const MIN_BEARER_TOKEN_CHARS = 32;
