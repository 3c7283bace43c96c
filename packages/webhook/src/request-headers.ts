import type { Endpoint } from '@sluice/config';
import { BATCH_ID_HEADER, BATCH_SIZE_HEADER } from './batch.ts';
import { CONTENT_TYPE, MESSAGE_ID_HEADER, USER_AGENT } from './constants.ts';

/**
 * The headers of a webhook request (docs/reference/delivery.md). The endpoint's static headers go
 * first so that the fixed ones can never be overridden (config validation already rejects reserved
 * names); the signature headers (`signatureHeaders`) go last.
 */
export function requestHeaders(
  endpoint: Pick<Endpoint, 'url' | 'headers'>,
  messageId: string,
  signature: Record<string, string> | undefined,
): Record<string, string> {
  const headers: Record<string, string> = { ...endpoint.headers };
  headers['user-agent'] = USER_AGENT;
  headers['content-type'] = CONTENT_TYPE;
  headers[MESSAGE_ID_HEADER.toLowerCase()] = messageId;
  if (signature !== undefined) Object.assign(headers, signature);
  return headers;
}

/**
 * The headers of a batch request (docs/reference/batches.md): as `requestHeaders`, with
 * `X-Batch-Id` and `X-Batch-Size` in place of `X-Message-Id` (the events' ids are in the body).
 */
export function batchRequestHeaders(
  endpoint: Pick<Endpoint, 'url' | 'headers'>,
  batchId: string,
  size: number,
  signature: Record<string, string> | undefined,
): Record<string, string> {
  const headers: Record<string, string> = { ...endpoint.headers };
  headers['user-agent'] = USER_AGENT;
  headers['content-type'] = CONTENT_TYPE;
  headers[BATCH_ID_HEADER.toLowerCase()] = batchId;
  headers[BATCH_SIZE_HEADER.toLowerCase()] = String(size);
  if (signature !== undefined) Object.assign(headers, signature);
  return headers;
}
