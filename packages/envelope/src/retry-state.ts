import { headerText, type RawHeaders } from './header-text.ts';

/**
 * Retry state that travels in Kafka record headers between the deliverer, the retry service and
 * the dead-letter topic (docs/reference/retries.md). The record value is always the exact webhook body bytes, so a
 * retry sends byte-for-byte what the first attempt sent.
 */
export const RETRY_HEADERS = {
  messageId: 'sluice-message-id',
  sourceId: 'sluice-source-id',
  destinationId: 'sluice-destination-id',
  eventType: 'sluice-event-type',
  endpoints: 'sluice-endpoints',
  firstAttemptAt: 'sluice-first-attempt-at',
  attempts: 'sluice-attempts',
  dueAt: 'sluice-due-at',
  retryAfterMs: 'sluice-retry-after-ms',
  lastError: 'sluice-last-error',
  history: 'sluice-history',
  receivedAt: 'sluice-received-at',
  deadReason: 'sluice-dead-reason',
  deadAt: 'sluice-dead-at',
  windowMs: 'sluice-window-ms',
  deferrals: 'sluice-deferrals',
} as const;

/**
 * Why an event ends on the dead-letter topic (docs/reference/retries.md, "Dead letters"): every
 * reason there is, the one list the CLI, the delivery log's API and its schema take them from.
 * `no_endpoints`: no endpoint the event is for is left in a destination that exists, or the
 * destination is disabled; `destination_deleted`: its destination no longer exists (deleted at
 * runtime or removed from the config file).
 */
export const DEAD_REASONS = [
  'window_exhausted',
  'permanent_failure',
  'no_endpoints',
  'destination_deleted',
  'undecodable',
] as const;

/**
 * The last error of an event dead-lettered `destination_deleted`, whichever service dead-letters it
 * (the deliverer's intake, or the retry service when its window ends meanwhile).
 */
export const destinationGoneError = (destinationId: string): string => `destination ${destinationId} is gone`;

/** Why an event ended on the dead-letter topic (`DEAD_REASONS`). */
export type DeadReason = (typeof DEAD_REASONS)[number];

/** One delivery attempt to one endpoint, as kept in the history and on `sluice.attempts`. */
export interface AttemptRecord {
  /** 1-based attempt number of the event (all endpoints of one attempt share it). */
  attempt: number;
  endpoint: string;
  /** Epoch milliseconds when the attempt started. */
  at: number;
  outcome: 'success' | 'retryable' | 'permanent';
  status?: number;
  /** Stable error code of the failure class, e.g. `UND_ERR_HEADERS_TIMEOUT`, `http_500`. */
  error?: string;
  latencyMs: number;
}

export interface RetryState {
  messageId: string;
  sourceId: string;
  destinationId: string;
  eventType: string;
  /** Endpoint URLs still to be retried (those whose last failure was retryable). */
  endpoints: string[];
  /** Epoch ms of the first attempt: the 4-hour window counts from here. */
  firstAttemptAt: number;
  /** Number of attempts made so far. */
  attempts: number;
  /** Epoch ms when the next attempt is due (set by the retry service). */
  dueAt?: number;
  /** The server's `Retry-After`, in ms, when the last failure carried one. */
  retryAfterMs?: number;
  lastError?: string;
  history: AttemptRecord[];
  /** ISO time ingest received the event, for end-to-end latency. */
  receivedAt?: string;
  deadReason?: DeadReason;
  deadAt?: number;
  /** Window override in ms carried by a replay; absent means the configured window. */
  windowMs?: number;
  /**
   * Times the deliverer handed the event back without an attempt (an endpoint held back: circuit
   * open, `Retry-After`, rate limit, destination stalled); spaces out its next deferrals.
   */
  deferrals?: number;
}

export type RecordHeaders = Record<string, string>;

const text = headerText;

function int(headers: RawHeaders, name: string): number | undefined {
  const value = text(headers, name);
  if (value === undefined) return undefined;
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : undefined;
}

export function retryStateToHeaders(state: RetryState): RecordHeaders {
  const h = RETRY_HEADERS;
  const headers: RecordHeaders = {
    [h.messageId]: state.messageId,
    [h.sourceId]: state.sourceId,
    [h.destinationId]: state.destinationId,
    [h.eventType]: state.eventType,
    [h.endpoints]: JSON.stringify(state.endpoints),
    [h.firstAttemptAt]: String(state.firstAttemptAt),
    [h.attempts]: String(state.attempts),
    [h.history]: JSON.stringify(state.history),
  };
  if (state.dueAt !== undefined) headers[h.dueAt] = String(state.dueAt);
  if (state.retryAfterMs !== undefined) headers[h.retryAfterMs] = String(state.retryAfterMs);
  if (state.lastError !== undefined) headers[h.lastError] = state.lastError;
  if (state.receivedAt !== undefined) headers[h.receivedAt] = state.receivedAt;
  if (state.deadReason !== undefined) headers[h.deadReason] = state.deadReason;
  if (state.deadAt !== undefined) headers[h.deadAt] = String(state.deadAt);
  if (state.windowMs !== undefined) headers[h.windowMs] = String(state.windowMs);
  if (state.deferrals !== undefined) headers[h.deferrals] = String(state.deferrals);
  return headers;
}

export class RetryHeadersError extends Error {
  readonly code = 'invalid_retry_headers';
}

const OUTCOMES: ReadonlySet<unknown> = new Set(['success', 'retryable', 'permanent']);

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * The attempt history of a retry-state header, rebuilt from its known fields only: each entry
 * must be an attempt record (number `attempt`, `at`, `latencyMs`; string `endpoint`; a known
 * `outcome`; optional number `status` and string `error`). Whatever else a record carries is
 * dropped, so nothing deeper than one level travels on (and a later `JSON.stringify` of the
 * history stays shallow however deep the header's JSON was).
 */
function readHistory(value: unknown): AttemptRecord[] {
  const bad = (why: string) => new RetryHeadersError(`header ${RETRY_HEADERS.history} ${why}`);
  if (!Array.isArray(value)) throw bad('must be a JSON array of attempt records');
  return value.map((entry: unknown, i) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw bad(`[${i}] is not an object`);
    const e = entry as Record<string, unknown>;
    if (
      !isFiniteNumber(e.attempt) ||
      !isFiniteNumber(e.at) ||
      !isFiniteNumber(e.latencyMs) ||
      typeof e.endpoint !== 'string' ||
      !OUTCOMES.has(e.outcome)
    ) {
      throw bad(`[${i}] is not an attempt record`);
    }
    const record: AttemptRecord = {
      attempt: e.attempt,
      endpoint: e.endpoint,
      at: e.at,
      outcome: e.outcome as AttemptRecord['outcome'],
      latencyMs: e.latencyMs,
    };
    if (e.status !== undefined) {
      if (!isFiniteNumber(e.status)) throw bad(`[${i}].status is not a number`);
      record.status = e.status;
    }
    if (e.error !== undefined) {
      if (typeof e.error !== 'string') throw bad(`[${i}].error is not a string`);
      record.error = e.error;
    }
    return record;
  });
}

/** Reads retry state back from record headers; throws `RetryHeadersError` naming the bad header. */
export function retryStateFromHeaders(headers: RawHeaders): RetryState {
  const h = RETRY_HEADERS;
  const need = (name: string): string => {
    const value = text(headers, name);
    if (value === undefined) throw new RetryHeadersError(`missing header ${name}`);
    return value;
  };
  const json = <T>(name: string, fallback: T): T => {
    const value = text(headers, name);
    if (value === undefined) return fallback;
    try {
      return JSON.parse(value) as T;
    } catch {
      throw new RetryHeadersError(`header ${name} is not JSON`);
    }
  };
  const firstAttemptAt = int(headers, h.firstAttemptAt);
  const attempts = int(headers, h.attempts);
  if (firstAttemptAt === undefined) throw new RetryHeadersError(`missing header ${h.firstAttemptAt}`);
  if (attempts === undefined) throw new RetryHeadersError(`missing header ${h.attempts}`);
  const endpoints = json<unknown>(h.endpoints, []);
  if (!Array.isArray(endpoints) || !endpoints.every((e) => typeof e === 'string')) {
    throw new RetryHeadersError(`header ${h.endpoints} must be a JSON array of URLs`);
  }
  const state: RetryState = {
    messageId: need(h.messageId),
    sourceId: need(h.sourceId),
    destinationId: need(h.destinationId),
    eventType: text(headers, h.eventType) ?? 'unknown',
    endpoints,
    firstAttemptAt,
    attempts,
    history: readHistory(json<unknown>(h.history, [])),
  };
  const optional = {
    dueAt: int(headers, h.dueAt),
    retryAfterMs: int(headers, h.retryAfterMs),
    lastError: text(headers, h.lastError),
    receivedAt: text(headers, h.receivedAt),
    deadReason: text(headers, h.deadReason) as DeadReason | undefined,
    deadAt: int(headers, h.deadAt),
    windowMs: int(headers, h.windowMs),
    deferrals: int(headers, h.deferrals),
  };
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) (state as unknown as Record<string, unknown>)[key] = value;
  }
  return state;
}
