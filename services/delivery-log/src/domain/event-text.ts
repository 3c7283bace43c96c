import { MAX_EVENT_BYTES, MAX_EVENT_DEPTH, MAX_NUMBER_CHARS, MAX_RENDERED_EVENT_BYTES } from '../constants.ts';
import { storableText } from './storable-text.ts';

/**
 * Why an event is kept as text instead of JSON (docs/delivery-log.md, "Events the database's JSON
 * refuses"), or why a read shows only part of it. A closed set: it is a metric label.
 *
 * - `number_out_of_range`: a number PostgreSQL's `numeric` refuses (`1e-16384`) or prints back
 *   far longer than it was written (`1e-16383` prints as 16,385 characters);
 * - `too_deep`: nested deeper than `MAX_EVENT_DEPTH`;
 * - `too_large`: larger than `MAX_EVENT_BYTES` (the text is cut there);
 * - `database_refused`: the database refused the JSON for another reason (the text is kept);
 * - `unstorable`: the database refused the text too (only the message row is kept);
 * - `cut_for_display`: a read found the event larger than `MAX_RENDERED_EVENT_BYTES`.
 */
export const EVENT_NOTES = [
  'number_out_of_range',
  'too_deep',
  'too_large',
  'database_refused',
  'unstorable',
  'cut_for_display',
] as const;
export type EventNote = (typeof EVENT_NOTES)[number];

/** How an event is stored: as JSON (the `jsonb` column), or as flagged text beside it. */
export type StoredEvent = { json: string } | { text: string | null; note: EventNote };

/** A JSON number token; groups: integer digits, fraction digits, exponent. */
const NUMBER = /-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?/y;

/** Characters PostgreSQL's `numeric` prints for the number written as `int`.`frac`e`exp` (an upper bound). */
export function printedNumberLength(int: string, frac: string, exp: number): number {
  const digits = int.length + frac.length;
  const point = int.length + exp;
  const whole = Math.max(1, point);
  const fraction = Math.max(0, digits - point);
  return whole + (fraction > 0 ? fraction + 1 : 0);
}

/**
 * Why the JSON text `text` (valid JSON) is not stored as JSON, or undefined: one pass over the
 * text counting nesting and sizing every number as the database would print it.
 */
export function jsonProblem(text: string): EventNote | undefined {
  if (Buffer.byteLength(text) > MAX_EVENT_BYTES) return 'too_large';
  let depth = 0;
  let growth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string: to the next quote not escaped.
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_EVENT_DEPTH) return 'too_deep';
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text);
      if (m === null) continue;
      const exp = m[3] === undefined ? 0 : Number(m[3]);
      const printed = printedNumberLength(m[1]!, m[2] ?? '', exp);
      if (!Number.isFinite(printed) || printed > MAX_NUMBER_CHARS) return 'number_out_of_range';
      growth += Math.max(0, printed - m[0].length);
      if (growth > MAX_EVENT_BYTES) return 'number_out_of_range';
      i += m[0].length - 1;
    }
  }
  return undefined;
}

/** The first `max` bytes of `text` at most, cut on a character boundary. */
export function cutText(text: string, max: number): string {
  if (Buffer.byteLength(text) <= max) return text;
  return storableText(
    Buffer.from(text)
      .subarray(0, max)
      .toString('utf8')
      .replace(/\ufffd+$/, ''),
  );
}

/** How the event text `text` (valid JSON, storable: records.ts) is stored. */
export function storedEvent(text: string): StoredEvent {
  const note = jsonProblem(text);
  if (note === undefined) return { json: text };
  return { text: note === 'too_large' ? cutText(text, MAX_EVENT_BYTES) : text, note };
}

/** What a read shows of a stored event. */
export interface RenderedEvent {
  /** The event as JSON, or null when it is kept as text (or not kept). */
  event: unknown;
  /** The text kept instead (at most `MAX_RENDERED_EVENT_BYTES`), or null. */
  eventText: string | null;
  /** Why `event` is not the whole event as sent, or null. */
  eventNote: EventNote | null;
}

/**
 * Renders a stored event from its columns, bounded: the JSON as the database prints it (read as at
 * most `MAX_RENDERED_EVENT_BYTES + 1` characters), else the kept text; anything longer is cut,
 * and the note says so.
 */
export function renderEvent(json: string | null, text: string | null, note: string | null): RenderedEvent {
  const known = (EVENT_NOTES as readonly string[]).includes(note ?? '') ? (note as EventNote) : null;
  if (json !== null) {
    if (json.length <= MAX_RENDERED_EVENT_BYTES && Buffer.byteLength(json) <= MAX_RENDERED_EVENT_BYTES)
      return { event: JSON.parse(json), eventText: null, eventNote: known };
    return { event: null, eventText: cutText(json, MAX_RENDERED_EVENT_BYTES), eventNote: 'cut_for_display' };
  }
  if (text === null) return { event: null, eventText: null, eventNote: known };
  if (Buffer.byteLength(text) <= MAX_RENDERED_EVENT_BYTES) return { event: null, eventText: text, eventNote: known };
  return { event: null, eventText: cutText(text, MAX_RENDERED_EVENT_BYTES), eventNote: 'cut_for_display' };
}
