/**
 * Batched delivery's wire format (docs/reference/batches.md): one request carries many events,
 * each exactly as its own request would carry it, and the receiver may answer per event.
 */

export const BATCH_ID_HEADER = 'X-Batch-Id';
export const BATCH_SIZE_HEADER = 'X-Batch-Size';
/** The most of a 2xx answer's body read for per-event results; a longer one is malformed. */
export const MAX_BATCH_RESULT_BYTES = 1024 * 1024;
/** Per-event `error` strings from a receiver are cut to this many characters. */
export const MAX_BATCH_ERROR_CHARS = 200;

export interface BatchItem {
  messageId: string;
  /** The event's webhook body, the bytes its single request would send. */
  body: Buffer;
}

const COMMA = Buffer.from(',');
const TAIL = Buffer.from(']}');

/**
 * `{"batchId":"…","messageIds":["m1",…],"events":[e1,…]}`: `events[i]` is byte for byte the body
 * `messageIds[i]` would be sent with alone; the signature covers the whole document. The document
 * is all of its own memory (never a slice of Node's shared pool), so that it can move to another
 * thread without a copy.
 */
export function renderBatchBody(batchId: string, items: readonly BatchItem[]): Buffer {
  const ids = JSON.stringify(items.map((i) => i.messageId));
  const parts: Buffer[] = [Buffer.from(`{"batchId":${JSON.stringify(batchId)},"messageIds":${ids},"events":[`)];
  let length = parts[0]!.length + TAIL.length;
  items.forEach((item, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(item.body);
    length += item.body.length + (i > 0 ? COMMA.length : 0);
  });
  parts.push(TAIL);
  const body = Buffer.allocUnsafeSlow(length);
  let at = 0;
  for (const part of parts) at += part.copy(body, at);
  return body;
}

/** The bytes of a batch document with no events, for a batch id of `batchIdBytes` bytes (an ASCII id). */
export function batchBaseBytes(batchIdBytes: number): number {
  return `{"batchId":"","messageIds":[],"events":[]}`.length + batchIdBytes;
}

/**
 * What one more event adds to a batch document: its id (quoted, escaped), its body, and a comma in
 * each array. For the first event the commas are not written: `batchBodyBytes` takes them off.
 */
export function batchItemBytes(item: BatchItem): number {
  return Buffer.byteLength(JSON.stringify(item.messageId)) + item.body.length + 2;
}

/** The exact length of `renderBatchBody(batchId, items)` for an ASCII `batchId`. */
export function batchBodyBytes(batchIdBytes: number, items: readonly BatchItem[]): number {
  if (items.length === 0) return batchBaseBytes(batchIdBytes);
  let total = batchBaseBytes(batchIdBytes) - 2;
  for (const item of items) total += batchItemBytes(item);
  return total;
}

/** One event a receiver reported as not taken: its status decides retry or dead letter. */
export interface FailedItem {
  /** 400–599 when given; absent means retryable. */
  status?: number;
  error?: string;
}

/**
 * How a 2xx answer to a batch settles its events (docs/reference/batches.md):
 * - `all`: every event is delivered (empty body, a body that is not JSON by its content type, or a
 *   JSON object without `failed`, or with `failed: []`);
 * - `partial`: the events named in `failed` are not, the rest are;
 * - `malformed`: the answer claims per-event results but cannot be read (not a JSON object, `failed`
 *   not an array, an entry without a known `messageId`, a status outside 400–599, longer than
 *   `MAX_BATCH_RESULT_BYTES`): the whole batch counts as failed, retryable.
 */
export type BatchResult =
  | { kind: 'all' }
  | { kind: 'partial'; failed: Map<string, FailedItem> }
  | { kind: 'malformed'; error: string };

const isJsonType = (contentType: string | undefined): boolean => {
  if (contentType === undefined) return false;
  const type = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
};

const malformed = (error: string): BatchResult => ({ kind: 'malformed', error: `batch_result_malformed: ${error}` });

/** Reads a 2xx answer's body for per-event results; `truncated` when more than the limit was sent. */
export function parseBatchResult(
  contentType: string | undefined,
  body: Buffer | undefined,
  messageIds: ReadonlySet<string>,
  truncated = false,
): BatchResult {
  if (body === undefined || body.length === 0 || !isJsonType(contentType)) return { kind: 'all' };
  if (truncated || body.length > MAX_BATCH_RESULT_BYTES)
    return malformed(`answer longer than ${MAX_BATCH_RESULT_BYTES} bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return malformed('answer is not JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    return malformed('answer is not a JSON object');
  const { failed } = parsed as { failed?: unknown };
  if (failed === undefined) return { kind: 'all' };
  if (!Array.isArray(failed)) return malformed('"failed" is not an array');
  const result = new Map<string, FailedItem>();
  for (const [i, entry] of failed.entries()) {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
      return malformed(`failed[${i}] is not an object`);
    const { messageId, status, error } = entry as { messageId?: unknown; status?: unknown; error?: unknown };
    if (typeof messageId !== 'string' || !messageIds.has(messageId))
      return malformed(`failed[${i}].messageId is not an event of this batch`);
    if (status !== undefined && !(Number.isInteger(status) && (status as number) >= 400 && (status as number) <= 599))
      return malformed(`failed[${i}].status is not an integer from 400 to 599`);
    if (error !== undefined && typeof error !== 'string') return malformed(`failed[${i}].error is not a string`);
    const item: FailedItem = {};
    if (status !== undefined) item.status = status as number;
    if (error !== undefined) item.error = error.slice(0, MAX_BATCH_ERROR_CHARS);
    result.set(messageId, item);
  }
  return result.size === 0 ? { kind: 'all' } : { kind: 'partial', failed: result };
}
