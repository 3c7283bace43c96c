import { MAX_TIME_MS, MIN_TIME_MS } from '../constants.ts';

/**
 * Where a page of a list ordered by time ends: the last row's time (epoch ms) and the keys that
 * order the rows of one time. Opaque to clients (base64url JSON).
 */
export interface TimeCursor {
  at: number;
  keys: string[];
}

/**
 * One page of `rows` read one past its `limit`: the first `limit` of them, and the cursor of the
 * last when more followed (null: this page is the last).
 */
export function cutPage<T>(rows: readonly T[], page: { limit: number; cursorOf: (last: T) => string }) {
  const kept = rows.slice(0, page.limit);
  const last = kept.at(-1);
  return { page: kept, nextCursor: rows.length > page.limit && last !== undefined ? page.cursorOf(last) : null };
}

export function encodeTimeCursor(c: TimeCursor): string {
  return Buffer.from(JSON.stringify([c.at, ...c.keys])).toString('base64url');
}

/**
 * The cursor a client sent back, or undefined when it is not one this service could have written:
 * a whole time within `MIN_TIME_MS`–`MAX_TIME_MS` and `keyCount` strings, none with a character the
 * database cannot hold (a forged cursor is a 400, never a query the database refuses).
 */
export function decodeTimeCursor(text: string, keyCount: number): TimeCursor | undefined {
  if (text.length > 1_024 || !/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!Array.isArray(v) || v.length !== keyCount + 1) return undefined;
    const [at, ...keys] = v as unknown[];
    if (typeof at !== 'number' || !Number.isInteger(at) || at < MIN_TIME_MS || at > MAX_TIME_MS) return undefined;
    if (!keys.every((k): k is string => typeof k === 'string' && !k.includes('\u0000'))) return undefined;
    return { at, keys };
  } catch {
    return undefined;
  }
}

/** Where a page of the message list ends: the last row's sort key. */
export interface Cursor {
  receivedAt: number;
  sourceId: string;
  messageId: string;
}

export function encodeCursor(c: Cursor): string {
  return encodeTimeCursor({ at: c.receivedAt, keys: [c.sourceId, c.messageId] });
}

/** A message list's cursor (whose ids the caller checks as any id), or undefined (`decodeTimeCursor`). */
export function decodeCursor(text: string): Cursor | undefined {
  const c = decodeTimeCursor(text, 2);
  if (c === undefined) return undefined;
  const [sourceId, messageId] = c.keys as [string, string];
  return { receivedAt: c.at, sourceId, messageId };
}
