import { DEFAULT_PAGE_SIZE, DEFAULT_STREAM_SIZE, MAX_ID_LENGTH, MAX_PAGE_SIZE, MAX_STREAM_SIZE } from '../constants.ts';
import { decodeCursor, type Cursor } from './cursor.ts';
import { DELIVERY_STATES, type DeliveryState } from './state.ts';

/** A 400 answer: the field and what is wrong with it. */
export interface Invalid {
  ok: false;
  field: string;
  message: string;
}
export type Checked<T> = { ok: true; value: T } | Invalid;

const ID = /^[\x21-\x7e]+$/;
const invalid = (field: string, message: string): Invalid => ({ ok: false, field, message });

/** An id (source, message, destination): 1–200 printable ASCII characters. */
export function checkId(field: string, value: string | null | undefined): Checked<string | undefined> {
  if (value === null || value === undefined) return { ok: true, value: undefined };
  if (value.length === 0 || value.length > MAX_ID_LENGTH || !ID.test(value)) {
    return invalid(field, `must be 1–${MAX_ID_LENGTH} printable ASCII characters`);
  }
  return { ok: true, value };
}

/** A time: ISO 8601 or epoch milliseconds. */
export function checkTime(field: string, value: string | null | undefined): Checked<number | undefined> {
  if (value === null || value === undefined) return { ok: true, value: undefined };
  if (value.length > 40) return invalid(field, 'must be an ISO 8601 time or epoch milliseconds');
  const n = /^\d{1,15}$/.test(value) ? Number(value) : Date.parse(value);
  return Number.isNaN(n) ? invalid(field, 'must be an ISO 8601 time or epoch milliseconds') : { ok: true, value: n };
}

function checkInt(field: string, value: string | null | undefined, fallback: number, max: number): Checked<number> {
  if (value === null || value === undefined) return { ok: true, value: fallback };
  if (!/^\d{1,6}$/.test(value) || Number(value) < 1 || Number(value) > max)
    return invalid(field, `must be an integer from 1 to ${max}`);
  return { ok: true, value: Number(value) };
}

export interface ListQuery {
  sourceId?: string;
  destinationId?: string;
  messageId?: string;
  state?: DeliveryState;
  since?: number;
  until?: number;
  limit: number;
  cursor?: Cursor;
}

const LIST_PARAMS = new Set(['sourceId', 'destinationId', 'messageId', 'state', 'since', 'until', 'limit', 'cursor']);

/** The message-list query string, every parameter checked; unknown parameters are refused. */
export function parseListQuery(params: URLSearchParams): Checked<ListQuery> {
  for (const name of params.keys())
    if (!LIST_PARAMS.has(name)) return invalid(name, 'is not a parameter of this route');
  const query: ListQuery = { limit: DEFAULT_PAGE_SIZE };
  for (const field of ['sourceId', 'destinationId', 'messageId'] as const) {
    const c = checkId(field, params.get(field));
    if (!c.ok) return c;
    if (c.value !== undefined) query[field] = c.value;
  }
  const state = params.get('state');
  if (state !== null) {
    if (!(DELIVERY_STATES as readonly string[]).includes(state))
      return invalid('state', `must be one of ${DELIVERY_STATES.join(', ')}`);
    query.state = state as DeliveryState;
  }
  for (const field of ['since', 'until'] as const) {
    const c = checkTime(field, params.get(field));
    if (!c.ok) return c;
    if (c.value !== undefined) query[field] = c.value;
  }
  if (query.since !== undefined && query.until !== undefined && query.since > query.until)
    return invalid('since', 'must not be after until');
  const limit = checkInt('limit', params.get('limit'), DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  if (!limit.ok) return limit;
  query.limit = limit.value;
  const cursor = params.get('cursor');
  if (cursor !== null) {
    const decoded = decodeCursor(cursor);
    if (!decoded) return invalid('cursor', 'is not a cursor this API returned');
    query.cursor = decoded;
  }
  return { ok: true, value: query };
}

export function parseStreamLimit(params: URLSearchParams): Checked<number> {
  return checkInt('limit', params.get('limit'), DEFAULT_STREAM_SIZE, MAX_STREAM_SIZE);
}

export interface ReplayFilterInput {
  sourceId?: string;
  destinationId?: string;
  reason?: 'window_exhausted' | 'permanent_failure' | 'no_endpoints' | 'undecodable';
  since?: number;
  until?: number;
}

const REASONS = ['window_exhausted', 'permanent_failure', 'no_endpoints', 'undecodable'] as const;
const REPLAY_FIELDS = new Set(['sourceId', 'destinationId', 'reason', 'since', 'until']);

/** The body of a filter replay: a JSON object of optional fields, nothing else. */
export function parseReplayFilter(body: unknown): Checked<ReplayFilterInput> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return invalid('body', 'must be a JSON object');
  const input = body as Record<string, unknown>;
  for (const key of Object.keys(input))
    if (!REPLAY_FIELDS.has(key)) return invalid(key, 'is not a field of a replay filter');
  const out: ReplayFilterInput = {};
  for (const field of ['sourceId', 'destinationId'] as const) {
    const v = input[field];
    if (v === undefined) continue;
    const c = checkId(field, typeof v === 'string' ? v : '');
    if (!c.ok) return c;
    out[field] = c.value!;
  }
  if (input.reason !== undefined) {
    if (!(REASONS as readonly unknown[]).includes(input.reason))
      return invalid('reason', `must be one of ${REASONS.join(', ')}`);
    out.reason = input.reason as ReplayFilterInput['reason'] & string;
  }
  for (const field of ['since', 'until'] as const) {
    const v = input[field];
    if (v === undefined) continue;
    const c = checkTime(field, typeof v === 'number' ? String(v) : typeof v === 'string' ? v : '');
    if (!c.ok) return c;
    out[field] = c.value!;
  }
  if (out.since !== undefined && out.until !== undefined && out.since > out.until)
    return invalid('since', 'must not be after until');
  return { ok: true, value: out };
}

/** A health window: a duration like `15m`, `1h`, `24h` (at most 7 days). */
export function parseWindow(value: string | null, fallbackMs: number): Checked<number> {
  if (value === null) return { ok: true, value: fallbackMs };
  const m = /^(\d{1,4})(m|h)$/.exec(value);
  const msValue = m ? Number(m[1]) * (m[2] === 'm' ? 60_000 : 3_600_000) : NaN;
  if (!m || msValue < 60_000 || msValue > 7 * 24 * 3_600_000)
    return invalid('window', 'must be a duration from 1m to 168h, like 15m or 1h');
  return { ok: true, value: msValue };
}
