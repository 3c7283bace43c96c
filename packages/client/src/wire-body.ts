import { LIBRARY_NAME, LIBRARY_VERSION } from './constants.ts';

const BATCH_CONTEXT_JSON = JSON.stringify({ library: { name: LIBRARY_NAME, version: LIBRARY_VERSION } });

/**
 * The request body of `POST /v1/batch` from already serialised messages:
 * `{"batch":[...],"sentAt":"<ISO>","context":{"library":{...}}}`. Messages are serialised
 * once, at the call; only `sentAt` changes between attempts.
 */
export function renderBatchBody(messageJsons: readonly string[], sentAt: string): string {
  return `{"batch":[${messageJsons.join(',')}],"sentAt":${JSON.stringify(sentAt)},"context":${BATCH_CONTEXT_JSON}}`;
}

/** Bytes of a body with no messages; `sentAt` is always 24 characters (`2026-11-21T23:34:15.123Z`). */
export const BATCH_BODY_OVERHEAD_BYTES = Buffer.byteLength(renderBatchBody([], '2000-01-01T00:00:00.000Z'), 'utf8');
