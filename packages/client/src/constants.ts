/** Library identity sent as `context.library` on every message and on every batch. */
export const LIBRARY_NAME = '@sluice/analytics';
/** Kept equal to `version` in package.json (a test checks it). */
export const LIBRARY_VERSION = '0.1.0';

/** Default base URL; the client posts to `${endpoint}/v1/batch`. */
export const DEFAULT_ENDPOINT = 'http://localhost:8080';
export const BATCH_PATH = '/v1/batch';

/** Flush when this many messages are queued (docs/reference/clients.md). */
export const DEFAULT_FLUSH_AT = 20;
/** A queued message waits at most this long before it is sent (docs/reference/clients.md). */
export const DEFAULT_FLUSH_AFTER_MS = 5_000;

/** One serialised message may be at most this many bytes (docs/reference/limits.md: 32 KB). */
export const MAX_MESSAGE_BYTES = 32_000;
/** One request body may be at most this many bytes (docs/reference/limits.md: 500 KB). */
export const MAX_BATCH_BYTES = 500_000;
/** One request may carry at most this many messages (docs/reference/tracking-api.md). */
export const MAX_BATCH_MESSAGES = 2_500;

export const DEFAULT_MAX_RETRIES = 10;
export const DEFAULT_RETRY_MIN_DELAY_MS = 100;
export const DEFAULT_RETRY_MAX_DELAY_MS = 10_000;
/** A server's `Retry-After` is honoured up to this many milliseconds. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** Batches sent at the same time. */
export const DEFAULT_MAX_IN_FLIGHT = 4;
/** Messages that may wait in memory; calls beyond it are refused. */
export const DEFAULT_MAX_QUEUE_SIZE = 100_000;
/** Deadline of one HTTP attempt (connect + response). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;

/** `DEBUG` value (comma or space separated list) that turns logging on. */
export const DEBUG_NAMESPACE = 'analytics';
