/**
 * The keys the ingestion groups records by, written once. Identifiers never hold U+0000 (records.ts
 * makes every text storable, `storableText`), so it separates the parts without ambiguity.
 */
const SEP = '\u0000';

export interface MessageRef {
  sourceId: string;
  messageId: string;
}

/** A message: source and message id. */
export const messageKey = (m: MessageRef): string => `${m.sourceId}${SEP}${m.messageId}`;

/** The message a `messageKey` names. */
export function splitMessageKey(key: string): MessageRef {
  const at = key.indexOf(SEP);
  return { sourceId: key.slice(0, at), messageId: key.slice(at + 1) };
}

/** A message at a destination. */
export const deliveryKey = (d: MessageRef & { destinationId: string }): string =>
  `${messageKey(d)}${SEP}${d.destinationId}`;

/** A record's place in its topic: the idempotency key of what it says. */
export const positionKey = (p: { topic: string; partition: number; offset: string }): string =>
  `${p.topic}${SEP}${p.partition}${SEP}${p.offset}`;
