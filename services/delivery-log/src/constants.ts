/** Defaults and limits of the delivery log, in one place (docs/CONVENTIONS.md). */

/** Consumer group: `<clientId>.delivery-log.<database id>`, so a fresh database reads the topics from the start. */
export const GROUP_SUFFIX = 'delivery-log';

/**
 * Records ingested at once per partition (they are written in one transaction per batch); what
 * bounds the memory is `deliveryLog.maxInFlightBytes`, across partitions.
 */
export const IN_FLIGHT_PER_PARTITION = 2_000;
/** Records written per database transaction at most. */
export const INGEST_BATCH_MAX = 5_000;
/**
 * Ingestion transactions in flight at once against PostgreSQL, each over its own share of the
 * messages (by message id), so the server works on several batches while the next are read.
 */
export const INGEST_LANES = 4;

/** Identifiers (source, message, destination) longer than this are refused by the API and clipped on ingestion. */
export const MAX_ID_LENGTH = 200;
/** Error texts, response snippets and endpoint URLs are kept up to this length. */
export const MAX_TEXT_LENGTH = 2_048;
/** Events are kept up to this size in bytes (the pipeline's own limit is smaller). */
export const MAX_EVENT_BYTES = 64 * 1024;
/** Events nested deeper than this are kept as text, not JSON (docs/delivery-log.md). */
export const MAX_EVENT_DEPTH = 128;
/**
 * Events with a number PostgreSQL's `numeric` would print longer than this (`1e-1000` prints as
 * 1,002 characters) are kept as text, not JSON: the printed form, not the written one, is what
 * every read of the event carries.
 */
export const MAX_NUMBER_CHARS = 1_000;
/** A read renders at most this many bytes of an event; a longer one is cut, with a note. */
export const MAX_RENDERED_EVENT_BYTES = 256 * 1024;
/** A message view lists at most this many records of the message the database refused. */
export const MAX_UNSTORED_SHOWN = 20;

/** Page size of the message list: default and maximum. */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;
/** Events of the live stream: default and maximum. */
export const DEFAULT_STREAM_SIZE = 20;
export const MAX_STREAM_SIZE = 100;
/** Largest request body the API reads. */
export const MAX_BODY_BYTES = 16 * 1024;
/** Replays of a filter re-inject at most this many dead letters per request. */
export const MAX_REPLAY_LETTERS = 10_000;
/** A replay gives up reading the dead-letter topic after this long without a record. */
export const REPLAY_IDLE_TIMEOUT_MS = 5_000;
/** Times the API accepts (`since`, `until`, cursors): from the epoch to the last millisecond of year 9999. */
export const MIN_TIME_MS = 0;
export const MAX_TIME_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
/** A message view lists at most this many attempts (the newest), rejected bodies and replays, with their totals. */
export const MAX_VIEW_ATTEMPTS = 100;
export const MAX_VIEW_REJECTED = 10;
export const MAX_VIEW_REPLAYS = 50;
/** A batch's view lists at most this many of its attempt rows (the largest batch a destination sends: 1,000 events). */
export const MAX_VIEW_BATCH_EVENTS = 1_000;

/** Rows deleted per statement and table by retention (each batch its own short transaction). */
export const PRUNE_BATCH_ROWS = 2_000;
/**
 * Pruning by age waits this many times a batch's duration after each batch: it takes at most a
 * fifth of one connection's time, and ingestion keeps its rate (bench/RESULTS.md, "Delivery log
 * bounds": with 2, ingestion kept 89 % of its rate on PostgreSQL).
 */
export const PRUNE_PAUSE_RATIO = 4;
/** How the service prunes by age (`LogStore.prune`'s options), for the benchmarks that measure it. */
export const RETENTION_PACING = { batchRows: PRUNE_BATCH_ROWS, pauseRatio: PRUNE_PAUSE_RATIO } as const;
/** Size cap of the embedded database's tables when `deliveryLog.maxSizeBytes` is not set. */
export const EMBEDDED_MAX_SIZE_BYTES = 192 * 1024 * 1024;
/** How often the log's size is checked against its cap. */
export const SIZE_CHECK_INTERVAL_MS = 1_000;
/** Eviction starts when the tables pass this share of the cap (the rest is headroom until the next check). */
export const EVICT_HIGH_WATER = 0.8;
/** Share of the messages, the oldest, that one eviction deletes. */
export const EVICT_FRACTION = 0.1;

/** Destination control: the recorded actions a page holds at most and by default, and a reason's length. */
export const MAX_ACTIONS_PAGE = 1_000;
export const DEFAULT_ACTIONS_PAGE = 50;
export const MAX_REASON_LENGTH = 500;
/** How long the start waits to have read the destination states that existed when it started. */
export const CONTROL_CATCH_UP_MS = 15_000;
/** Most buckets one ledger answer holds (a day by the minute); more is a 400 on `bucket`. */
export const MAX_LEDGER_BUCKETS = 1_440;
/** Widest `from`–`to` of one ledger answer (a week, the console's longest view); wider is a 400 on `from`. */
export const MAX_LEDGER_SPAN_MS = 7 * 86_400_000;
/**
 * What one ledger answer may read (docs/delivery-log.md, "Ledger"): on the embedded database, which
 * runs each statement in the service's own thread and would hold ingestion meanwhile, at most this
 * many deliveries received in `from`–`to` (about half a second's work); on PostgreSQL the statement
 * is cancelled after the timeout. Either is a 400 on `from`.
 */
export const LEDGER_BOUNDS = { embeddedRows: 100_000, statementTimeoutMs: 10_000 } as const;
/** Bytes of a receiver's answer a destination test shows (`POST …/destination-definitions/{id}/test`). */
export const TEST_ANSWER_BYTES = 1_024;

/**
 * Failed authentications the API takes from one client address before it answers 429: a burst of
 * 10, then one every 6 s (10 a minute); a valid token is never held back by them.
 */
export const AUTH_FAILURES = { burst: 10, perSecond: 1 / 6 } as const;
/** Client addresses whose failures are counted at once at most; past it the one seen least recently is forgotten. */
export const AUTH_FAILURE_CLIENTS = 10_000;
/**
 * How long a `429` to a client past its failed authentications is held before it is sent (at most
 * until its bucket refills): a client that keeps guessing gets about one answer a second per
 * connection, so a flood of wrong tokens costs the log little and does not slow other clients.
 */
export const LIMITED_ANSWER_HOLD_MS = 1_000;
/**
 * Held `429`s at once at most: per client address and in all. Past either, the `429` is sent at
 * once and closes its connection, so the answers held — a timer and an open request each — stay
 * bounded however many connections one client, or many, open.
 */
export const LIMITED_HELD = { perClient: 8, total: 1_000 } as const;
