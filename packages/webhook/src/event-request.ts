import type { Destination, Endpoint } from '@sluice/config';
import type { EventEnvelope } from '@sluice/envelope';
import { renderBatchBody } from './batch.ts';
import { encodeBody, renderBody } from './render-body.ts';
import { batchRequestHeaders, requestHeaders } from './request-headers.ts';
import { signatureHeaders } from './signature-headers.ts';

/** One event for one endpoint of a destination, at a moment of the sender's clock. */
export interface EventRequestInput {
  destination: Pick<Destination, 'signing' | 'batch'>;
  endpoint: Pick<Endpoint, 'url' | 'headers'>;
  event: EventEnvelope;
  /** Epoch ms the request is signed at. */
  nowMs: number;
  /** The id of the batch of one the event goes in when the destination batches (`X-Batch-Id`). */
  batchId: string;
}

/** The request's headers and exact body bytes, or why the event has no body (`renderBody`). */
export type EventRequest =
  | { ok: true; headers: Record<string, string>; body: Buffer; batchId?: string }
  | { ok: false; code: 'invalid_timestamp' | 'body_too_deep'; message: string };

/**
 * The request the deliverer makes for one event to one endpoint (docs/reference/delivery.md): the
 * body rendered and signed with the destination's schemes, the endpoint's headers and the fixed
 * ones; for a destination with `batch`, a batch of one (docs/reference/batches.md).
 */
export function eventRequest(input: EventRequestInput): EventRequest {
  const { destination, endpoint, event, nowMs, batchId } = input;
  const rendered = renderBody(event);
  if (!rendered.ok) return rendered;
  const single = encodeBody(rendered.body);
  if (destination.batch === undefined) {
    const signature = signatureHeaders(destination.signing, event.messageId, single, nowMs);
    return { ok: true, headers: requestHeaders(endpoint, event.messageId, signature), body: single };
  }
  const body = renderBatchBody(batchId, [{ messageId: event.messageId, body: single }]);
  const signature = signatureHeaders(destination.signing, batchId, body, nowMs);
  return { ok: true, headers: batchRequestHeaders(endpoint, batchId, 1, signature), body, batchId };
}
