import { parseBatchResult, type FailedItem } from '@sluice/webhook';
import type { AttemptResult } from '../../transport/attempt-result.ts';
import { classifyStatus } from '../../transport/classify.ts';

/** The error code of an event a receiver reported as failed without a status (retryable). */
export const BATCH_ITEM_FAILED = 'batch_item_failed';

/**
 * What one endpoint's batch request gave each event of the batch, in the order of `messageIds`
 * (docs/reference/batches.md, "Answers"). A non-2xx answer, a timeout or a network error is every
 * event's result; a 2xx is read with `parseBatchResult`: every event delivered, or the events the
 * answer names as failed get their own status (5xx, 408, 429 or none: retryable; other 4xx:
 * permanent) and the receiver's `error` as their response snippet, or, when the answer cannot be
 * read, every event fails retryably with `batch_result_malformed`. Events that share a result
 * share one object: it is read, never changed.
 */
export function batchEventResults(result: AttemptResult, messageIds: readonly string[], now: number): AttemptResult[] {
  const { endpoint, at, latencyMs } = result;
  const answer = result.answer;
  if (result.outcome !== 'success' || answer === undefined) {
    const { answer: _answer, ...same } = result;
    return messageIds.map(() => same);
  }
  const delivered: AttemptResult = { endpoint, at, latencyMs, outcome: 'success' };
  if (result.status !== undefined) delivered.status = result.status;
  const body = answer.body === undefined ? undefined : asBuffer(answer.body);
  if (body === undefined || body.length === 0) return messageIds.map(() => delivered);
  const verdict = parseBatchResult(answer.contentType, body, new Set(messageIds), answer.truncated);
  if (verdict.kind === 'all') return messageIds.map(() => delivered);
  if (verdict.kind === 'malformed') {
    const failed: AttemptResult = { ...delivered, outcome: 'retryable', error: verdict.error };
    if (result.responseSnippet !== undefined) failed.responseSnippet = result.responseSnippet;
    return messageIds.map(() => failed);
  }
  return messageIds.map((id) => {
    const item = verdict.failed.get(id);
    return item === undefined ? delivered : itemResult(delivered, item, now);
  });
}

function itemResult(base: AttemptResult, item: FailedItem, now: number): AttemptResult {
  const r: AttemptResult = { endpoint: base.endpoint, at: base.at, latencyMs: base.latencyMs, outcome: 'retryable' };
  if (item.status === undefined) r.error = BATCH_ITEM_FAILED;
  else {
    const c = classifyStatus(item.status, undefined, now);
    r.outcome = c.outcome;
    r.status = item.status;
    if (c.error !== undefined) r.error = c.error;
  }
  if (item.error !== undefined) r.responseSnippet = item.error;
  return r;
}

/** Structured clone (the webhook thread) hands a `Buffer` back as a plain `Uint8Array`. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
