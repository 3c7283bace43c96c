import { ENVELOPE_LIMITS, isJsonObject, nestingProblem, type CallType, type JsonObject } from '@sluice/envelope';
import { InvalidBodyError, TooManyCallsError } from '../errors.ts';

/** A request body taken apart (docs/reference/tracking-api.md): its calls plus the batch-level fields. */
export interface RequestBody {
  calls: unknown[];
  /** True when the body had a `batch` array (per-call `type` required). */
  isBatch: boolean;
  context?: JsonObject;
  integrations?: JsonObject;
  sentAt?: unknown;
  writeKey?: string;
}

/**
 * Splits a parsed body into calls. Any route takes either one call or `{ batch: [...] }`; a
 * batch-level `messageId` (Go v1) identifies the request only and is not used [decision].
 * `batch: null` is an empty batch (analytics-go v2 sends `{"batch": null}` on every `Close()`).
 * Batch-level `context` and `integrations` are merged into each envelope's own, one level below
 * its top: they may nest one level less than a call.
 */
export function splitBody(body: unknown, maxCalls: number): RequestBody {
  if (!isJsonObject(body)) throw new InvalidBodyError('request body must be a JSON object');
  const writeKey = typeof body.writeKey === 'string' && body.writeKey.length > 0 ? body.writeKey : undefined;
  if (body.batch === undefined) return { calls: [body], isBatch: false, ...(writeKey && { writeKey }) };
  if (body.batch === null) return { calls: [], isBatch: true, ...(writeKey && { writeKey }) };
  if (!Array.isArray(body.batch)) throw new InvalidBodyError('batch must be an array of calls');
  for (const field of ['context', 'integrations'] as const) {
    const problem = nestingProblem(body[field], ENVELOPE_LIMITS.maxDepth - 1);
    if (problem) throw new InvalidBodyError(`batch-level ${field}: ${problem.message}`);
  }
  if (body.batch.length > maxCalls) throw new TooManyCallsError(body.batch.length, maxCalls);
  return {
    calls: body.batch,
    isBatch: true,
    ...(isJsonObject(body.context) && { context: body.context }),
    ...(isJsonObject(body.integrations) && { integrations: body.integrations }),
    ...(body.sentAt !== undefined && { sentAt: body.sentAt }),
    ...(writeKey && { writeKey }),
  };
}

/** The tracking routes and the call type of each single-call route (docs/reference/tracking-api.md). */
export const TRACKING_ROUTES: Record<string, CallType | 'batch'> = {
  '/v1/identify': 'identify',
  '/v1/track': 'track',
  '/v1/page': 'page',
  '/v1/screen': 'screen',
  '/v1/group': 'group',
  '/v1/alias': 'alias',
  '/v1/batch': 'batch',
  '/v1/import': 'batch',
};
