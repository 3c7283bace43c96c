import { MAX_TIME_MS, MIN_TIME_MS } from '../constants.ts';

/** Where a page of the message list ends: the last row's sort key. Opaque to clients (base64url JSON). */
export interface Cursor {
  receivedAt: number;
  sourceId: string;
  messageId: string;
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.receivedAt, c.sourceId, c.messageId])).toString('base64url');
}

/**
 * The cursor a client sent back, or undefined when it is not one this service could have written:
 * a whole time within `MIN_TIME_MS`–`MAX_TIME_MS` and two strings (whose ids the caller checks as
 * any id: a forged cursor is a 400, never a query the database refuses).
 */
export function decodeCursor(text: string): Cursor | undefined {
  if (text.length > 1_024 || !/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!Array.isArray(v) || v.length !== 3) return undefined;
    const [receivedAt, sourceId, messageId] = v as unknown[];
    if (
      typeof receivedAt !== 'number' ||
      !Number.isInteger(receivedAt) ||
      receivedAt < MIN_TIME_MS ||
      receivedAt > MAX_TIME_MS ||
      typeof sourceId !== 'string' ||
      typeof messageId !== 'string'
    )
      return undefined;
    return { receivedAt, sourceId, messageId };
  } catch {
    return undefined;
  }
}
