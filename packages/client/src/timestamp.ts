import { ValidationError } from './errors.ts';

// Date, then optional time with optional seconds and fraction, then an optional zone
// (Z, ±hh, ±hhmm or ±hh:mm). A time without a zone is ambiguous and refused.
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?([Zz]|[+-]\d{2}(?::?\d{2})?))?$/;

/**
 * Normalises a caller's timestamp to ISO 8601 UTC with milliseconds and `Z`
 * (`2026-11-21T23:34:15.123Z`), the one form the client puts on the wire.
 * Accepts a `Date` or an ISO 8601 string in any common form; throws `ValidationError` otherwise.
 */
export function toIsoTimestamp(value: Date | string): string {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new ValidationError('timestamp is an invalid Date');
    return value.toISOString();
  }
  if (typeof value !== 'string') throw new ValidationError('timestamp must be a Date or an ISO 8601 string');
  const ms = parseIso8601(value);
  if (ms === undefined) throw new ValidationError(`timestamp "${value}" is not ISO 8601`);
  return new Date(ms).toISOString();
}

/** Milliseconds since the epoch, or `undefined` when `text` is not a valid ISO 8601 date-time. */
export function parseIso8601(text: string): number | undefined {
  const m = ISO_8601.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  const millis = Number(frac.slice(0, 3).padEnd(3, '0'));
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return undefined;
  const local = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  // Date.UTC rolls 31 February over into March; a round trip catches it.
  if (new Date(local).getUTCDate() !== day) return undefined;
  return local - zoneOffsetMs(zone);
}

function zoneOffsetMs(zone: string): number {
  if (zone === 'Z' || zone === 'z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2) || '0');
  return sign * (hours * 60 + minutes) * 60_000;
}
