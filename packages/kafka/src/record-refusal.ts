/**
 * Broker errors that refuse records for their own content (size, format, timestamp): the same
 * records are refused however often they are sent, while the records beside them can be written.
 * (kafkajs 2 has no client-side size check: an oversized record reaches the broker and comes back
 * as `MESSAGE_TOO_LARGE`.)
 */
export const REFUSAL_TYPES: ReadonlySet<string> = new Set([
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_RECORD',
  'CORRUPT_MESSAGE',
  'INVALID_TIMESTAMP',
]);

/** The refusals for size: of one record, or of the records of one partition together. */
export const SIZE_REFUSALS: ReadonlySet<string> = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);

/** Deepest `cause` links followed (kafkajs wraps an error it gave up retrying). */
const MAX_CAUSES = 5;

/**
 * The Kafka protocol error type (`MESSAGE_TOO_LARGE`, …) of an error kafkajs threw, also when it is
 * wrapped (`KafkaJSNumberOfRetriesExceeded`'s `cause`) or came over from the producer thread.
 */
export function kafkaErrorType(err: unknown): string | undefined {
  let e = err;
  for (let depth = 0; depth <= MAX_CAUSES && e !== null && typeof e === 'object'; depth++) {
    const type = (e as { type?: unknown }).type;
    if (typeof type === 'string') return type;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The refusal type when `err` is a refusal of records for their content, else undefined. */
export function refusalOf(err: unknown): string | undefined {
  const type = kafkaErrorType(err);
  return type !== undefined && REFUSAL_TYPES.has(type) ? type : undefined;
}
