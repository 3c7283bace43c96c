/** Where a page of the message list ends: the last row's sort key. Opaque to clients (base64url JSON). */
export interface Cursor {
  receivedAt: number;
  sourceId: string;
  messageId: string;
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.receivedAt, c.sourceId, c.messageId])).toString('base64url');
}

/** The cursor a client sent back, or undefined when it is not one this service wrote. */
export function decodeCursor(text: string): Cursor | undefined {
  if (text.length > 1_024 || !/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!Array.isArray(v) || v.length !== 3) return undefined;
    const [receivedAt, sourceId, messageId] = v as unknown[];
    if (
      typeof receivedAt !== 'number' ||
      !Number.isFinite(receivedAt) ||
      typeof sourceId !== 'string' ||
      typeof messageId !== 'string'
    )
      return undefined;
    return { receivedAt, sourceId, messageId };
  } catch {
    return undefined;
  }
}
