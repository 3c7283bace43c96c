import { isJsonObject, type JsonObject } from '@sluice/envelope';

/**
 * Where the members of a JSON object sit in its text, for text that `JSON.parse` has already
 * accepted (so the scan need not validate anything): lets ingest copy a call's own members
 * into its envelope as sent instead of serialising the parsed values again
 * (`envelope-splice.ts`).
 */

/** One object in the text: per member, the indices key start, key end, value start, value end. */
export interface ObjectMembers {
  /** Index of the object's `{`. */
  start: number;
  /** Index just after its `}`. */
  end: number;
  /** `[keyStart, keyEnd, valueStart, valueEnd, ...]`: key ranges include the quotes. */
  at: number[];
}

const QUOTE = 34;
const BACKSLASH = 92;

const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;

function skipSpace(text: string, i: number): number {
  while (isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** `i` is at a string's opening quote; returns the index after its closing quote. */
function endOfString(text: string, i: number): number {
  for (;;) {
    const quote = text.indexOf('"', i + 1);
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if ((backslashes & 1) === 0) return quote + 1;
    i = quote;
  }
}

/** `i` is at a value's first character; returns the index after the value. */
function endOfValue(text: string, i: number): number {
  const first = text.charCodeAt(i);
  if (first === QUOTE) return endOfString(text, i);
  if (first === 123 || first === 91) {
    let depth = 0;
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        i = endOfString(text, i);
        continue;
      }
      i++;
      if (c === 123 || c === 91) depth++;
      else if ((c === 125 || c === 93) && --depth === 0) return i;
    }
  }
  // A number, true, false or null: ends at a delimiter, white space or the end of the text.
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === 44 || c === 125 || c === 93 || isSpace(c) || Number.isNaN(c)) return i;
    i++;
  }
}

/** The members of the object whose `{` is at `start`. */
export function objectMembers(text: string, start: number): ObjectMembers {
  const at: number[] = [];
  let i = skipSpace(text, start + 1);
  if (text.charCodeAt(i) === 125) return { start, end: i + 1, at };
  for (;;) {
    const keyStart = i;
    i = endOfString(text, i);
    const keyEnd = i;
    i = skipSpace(text, skipSpace(text, i) + 1);
    const valueStart = i;
    i = endOfValue(text, i);
    at.push(keyStart, keyEnd, valueStart, i);
    i = skipSpace(text, i);
    if (text.charCodeAt(i) !== 44) return { start, end: i + 1, at };
    i = skipSpace(text, i + 1);
  }
}

/** The key of the member at `at[m]` (the text of a key without escapes, else its decoded value). */
export function memberKey(text: string, members: ObjectMembers, m: number): string {
  const raw = text.slice(members.at[m]! + 1, members.at[m + 1]! - 1);
  return raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
}

/**
 * The calls of a request body in its text: the body's own object for a single call, else one
 * entry per element of its (last) `batch` array, undefined for an element that is not an
 * object. Undefined when the body is not an object or `batch` is not an array.
 */
export function locateCalls(text: string): { body: ObjectMembers; calls: (ObjectMembers | undefined)[] } | undefined {
  const start = skipSpace(text, 0);
  if (text.charCodeAt(start) !== 123) return undefined;
  const body = objectMembers(text, start);
  let batchAt = -1;
  for (let m = 0; m < body.at.length; m += 4) if (memberKey(text, body, m) === 'batch') batchAt = m;
  if (batchAt < 0) return { body, calls: [body] };
  let i = body.at[batchAt + 2]!;
  if (text.charCodeAt(i) !== 91) return undefined;
  const calls: (ObjectMembers | undefined)[] = [];
  i = skipSpace(text, i + 1);
  while (text.charCodeAt(i) !== 93) {
    if (text.charCodeAt(i) === 123) {
      const call = objectMembers(text, i);
      calls.push(call);
      i = call.end;
    } else {
      calls.push(undefined);
      i = endOfValue(text, i);
    }
    i = skipSpace(text, i);
    if (text.charCodeAt(i) === 44) i = skipSpace(text, i + 1);
  }
  return { body, calls };
}

/** Own enumerable keys of a parsed object, counted without allocating (a key repeated in the text is one key). */
export function keyCount(value: object): number {
  let n = 0;
  for (const _ in value) n++;
  return n;
}

/** A body's text with the place of each call in it, for `spliceEnvelope`. */
export interface CallLayout {
  text: string;
  /** Per call: its members in `text`; undefined where the envelope has to be serialised from the parsed call. */
  calls: (ObjectMembers | undefined)[];
}

/**
 * Finds each call in the body's text. A body or call whose text repeats a key is left to the
 * parsed value (JSON.parse keeps the last value at the first key's place; the text has both).
 */
export function callLayout(text: string, body: JsonObject, calls: unknown[]): CallLayout | undefined {
  const located = locateCalls(text);
  if (!located || located.calls.length !== calls.length || located.body.at.length / 4 !== keyCount(body))
    return undefined;
  return {
    text,
    calls: located.calls.map((members, i) => {
      const call = calls[i];
      return members && isJsonObject(call) && members.at.length / 4 === keyCount(call) ? members : undefined;
    }),
  };
}
