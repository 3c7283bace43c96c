import { DEAD_REASONS, type DeadReason } from '@sluice/envelope';
import {
  DEFAULT_PAGE_SIZE,
  DEFAULT_STREAM_SIZE,
  MAX_ID_LENGTH,
  MAX_PAGE_SIZE,
  MAX_STREAM_SIZE,
  MAX_TIME_MS,
  MIN_TIME_MS,
} from '../constants.ts';
import { decodeCursor, type Cursor } from './cursor.ts';
import { DELIVERY_STATES, type DeliveryState } from './state.ts';
import { storableText } from './storable-text.ts';

/** A 400 answer: the field and what is wrong with it. */
export interface Invalid {
  ok: false;
  field: string;
  message: string;
}
export type Checked<T> = { ok: true; value: T } | Invalid;

const invalid = (field: string, message: string): Invalid => ({ ok: false, field, message });

/**
 * An id (source, message, destination) as the log keeps it: 1–200 UTF-16 code units of any text
 * the database can hold (`storableText`: no U+0000, no lone surrogate), so every id the log lists can be asked
 * for again (a rejected call's id may hold spaces or any other character).
 */
export function checkId(
  field: string,
  value: string | null | undefined,
  maxLength: number = MAX_ID_LENGTH,
): Checked<string | undefined> {
  if (value === null || value === undefined) return { ok: true, value: undefined };
  if (value.length === 0 || value.length > maxLength || storableText(value) !== value) {
    return invalid(field, `must be 1–${maxLength} characters (no U+0000)`);
  }
  return { ok: true, value };
}

const TIME_FORMAT = `must be an ISO 8601 time with its offset (2026-01-31T12:00:00Z, 2026-01-31T13:00:00.250+01:00) or epoch milliseconds, from ${new Date(MIN_TIME_MS).toISOString()} to ${new Date(MAX_TIME_MS).toISOString()}`;
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|([+-])(\d{2}):(\d{2}))$/;

/**
 * Epoch ms of a strict ISO 8601 date and time with its offset (`Z` or `±hh:mm`), or undefined.
 * Every part is checked (no 31 February, no hour 24): unlike `Date.parse`, nothing else is read as a
 * date (`' OR 1=1` is not 2001-01-01).
 */
export function parseIsoTime(text: string): number | undefined {
  const m = ISO_TIME.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const frac = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1_000);
  const local = new Date(0);
  local.setUTCFullYear(y, mo - 1, d);
  local.setUTCHours(h, mi, s, frac);
  if (local.getUTCFullYear() !== y || local.getUTCMonth() !== mo - 1 || local.getUTCDate() !== d) return undefined;
  if (h > 23 || mi > 59 || s > 59) return undefined;
  if (m[8] === 'Z') return local.getTime();
  const [oh, om] = [Number(m[10]), Number(m[11])];
  if (oh > 23 || om > 59) return undefined;
  return local.getTime() - (m[9] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
}

/**
 * A time: strict ISO 8601 with its offset, or epoch milliseconds (digits only), within
 * `MIN_TIME_MS`–`MAX_TIME_MS` (years 1970–9999, what the database and the cursor can hold).
 */
export function checkTime(field: string, value: string | null | undefined): Checked<number | undefined> {
  if (value === null || value === undefined) return { ok: true, value: undefined };
  const n = value.length > 40 ? undefined : /^\d{1,15}$/.test(value) ? Number(value) : parseIsoTime(value);
  if (n === undefined || n < MIN_TIME_MS || n > MAX_TIME_MS) return invalid(field, TIME_FORMAT);
  return { ok: true, value: n };
}

/**
 * The query string of a route: parameters it does not take, or given twice, are refused (400
 * naming the parameter) on every route.
 */
export function checkParams(params: URLSearchParams, allowed: readonly string[]): Invalid | undefined {
  const seen = new Set<string>();
  for (const name of params.keys()) {
    if (!allowed.includes(name)) return invalid(name, 'is not a parameter of this route');
    if (seen.has(name)) return invalid(name, 'is given more than once');
    seen.add(name);
  }
  return undefined;
}

export function checkInt(
  field: string,
  value: string | null | undefined,
  fallback: number,
  max: number,
): Checked<number> {
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

/** The parameters of the message list. */
export const LIST_PARAMS = ['sourceId', 'destinationId', 'messageId', 'state', 'since', 'until', 'limit', 'cursor'];

/** The message-list query string, every parameter checked; unknown or repeated parameters are refused. */
export function parseListQuery(params: URLSearchParams): Checked<ListQuery> {
  const unknown = checkParams(params, LIST_PARAMS);
  if (unknown) return unknown;
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
    if (!decoded || !checkId('cursor', decoded.sourceId).ok || !checkId('cursor', decoded.messageId).ok)
      return invalid('cursor', 'is not a cursor this API returned');
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
  reason?: DeadReason;
  since?: number;
  until?: number;
}

const REASONS: readonly DeadReason[] = DEAD_REASONS;
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
