/**
 * Timestamp normalisation of docs/reference/tracking-api.md, pure: ISO 8601 in any common form in, ISO 8601 UTC with
 * milliseconds and `Z` out, and the clock-skew correction
 * `timestamp = receivedAt − (sentAt − originalTimestamp)`.
 */

import { parseCanonicalTimestamp } from '@sluice/envelope';

// Date, then optional time with optional seconds, fraction (`.` or `,`), and zone (`Z`, `±hh`,
// `±hhmm`, `±hh:mm`). A time without a zone is read as UTC [decision].
const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;

/** Parses an ISO 8601 string into epoch milliseconds; undefined when it is not one. */
export function parseTimestamp(value: unknown): number | undefined {
  if (typeof value !== 'string' || value.length > 64) return undefined;
  const canonical = parseCanonicalTimestamp(value);
  if (canonical !== undefined) return canonical;
  const m = ISO.exec(value.trim());
  if (!m) return undefined;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone = 'Z'] = m;
  const year = Number(y),
    month = Number(mo),
    day = Number(d),
    hour = Number(h),
    minute = Number(mi),
    second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  const ms = Number(frac.slice(0, 3).padEnd(3, '0'));
  const utc = Date.UTC(year, month - 1, day, hour, minute, Math.min(second, 59), ms);
  // Reject impossible dates (Feb 30) that Date.UTC would roll over.
  if (new Date(utc).getUTCDate() !== day) return undefined;
  return utc - zoneOffsetMs(zone);
}

function zoneOffsetMs(zone: string): number {
  if (zone === 'Z' || zone === 'z') return 0;
  const sign = zone[0] === '-' ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
  return sign * (hours * 60 + minutes) * 60_000;
}

const DAY_MS = 86_400_000;
const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, '0'));
// The date part of the last day formatted: the calls of a request fall on one or two days.
let cachedDay = { start: NaN, prefix: '' };

/** ISO 8601 UTC with milliseconds and `Z`: `Date#toISOString`, with the date part of the last day used kept. */
export function formatTimestamp(ms: number): string {
  const inDay = ms - cachedDay.start;
  if (inDay >= 0 && inDay < DAY_MS && Number.isInteger(inDay)) {
    const seconds = Math.floor(inDay / 1000);
    const minutes = Math.floor(seconds / 60);
    return `${cachedDay.prefix}${TWO_DIGITS[Math.floor(minutes / 60)]}:${TWO_DIGITS[minutes % 60]}:${TWO_DIGITS[seconds % 60]}.${THREE_DIGITS[inDay % 1000]}Z`;
  }
  const iso = new Date(ms).toISOString();
  // Only four-digit years have the fixed layout the fast path writes.
  if (iso.length === 24 && Number.isInteger(ms))
    cachedDay = { start: ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS), prefix: iso.slice(0, 11) };
  return iso;
}

export interface CallTimes {
  /** The client's `timestamp` as sent (any form). */
  timestamp?: unknown;
  /** The client's `sentAt` (the call's own, else the batch's). */
  sentAt?: unknown;
  /** Server clock when the request arrived, epoch ms. */
  receivedAt: number;
}

export interface NormalisedTimes {
  timestamp: string;
  receivedAt: string;
  /** The client's timestamp, normalised; absent when the client sent none (or an unreadable one). */
  originalTimestamp?: string;
  sentAt?: string;
}

/**
 * Applies docs/reference/tracking-api.md: corrected when both client timestamp and `sentAt` are given, the client value
 * when only it is, else `receivedAt`. An unreadable value counts as absent [decision].
 */
export function normaliseTimes(times: CallTimes): NormalisedTimes {
  // A value already in the output form is its own normalisation (saves a Date per call); it is
  // read once, by the canonical reader, and only other values take the general one.
  const canonical = typeof times.timestamp === 'string' ? parseCanonicalTimestamp(times.timestamp) : undefined;
  const original = canonical ?? parseTimestamp(times.timestamp);
  const sent = sentAtOf(times.sentAt);
  const receivedAt = receivedAtOf(times.receivedAt);
  const out: NormalisedTimes = { timestamp: receivedAt, receivedAt };
  if (sent !== undefined) out.sentAt = sent.iso;
  if (original !== undefined) {
    out.originalTimestamp = canonical !== undefined ? (times.timestamp as string) : formatTimestamp(original);
    out.timestamp =
      sent === undefined ? out.originalTimestamp : formatTimestamp(times.receivedAt - (sent.ms - original));
  }
  return out;
}

// The calls of one request share `receivedAt` and usually the batch's `sentAt`: one-entry caches
// keep them from being formatted and parsed once per call. Transparent: same input, same output.
let lastReceived: { ms: number; iso: string } | undefined;
function receivedAtOf(ms: number): string {
  if (lastReceived?.ms !== ms) lastReceived = { ms, iso: formatTimestamp(ms) };
  return lastReceived.iso;
}

let lastSent: { value: string; parsed: { ms: number; iso: string } | undefined } | undefined;
function sentAtOf(value: unknown): { ms: number; iso: string } | undefined {
  if (typeof value !== 'string') return undefined;
  if (lastSent?.value !== value) {
    const ms = parseTimestamp(value);
    lastSent = { value, parsed: ms === undefined ? undefined : { ms, iso: formatTimestamp(ms) } };
  }
  return lastSent.parsed;
}
