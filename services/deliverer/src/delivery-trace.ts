import type { Destination } from '@sluice/config';
import {
  endSpan,
  headersOf,
  inSpan,
  type Span,
  SpanKind,
  TRACEPARENT,
  type TraceHeaders,
  TRACESTATE,
  type Tracing,
} from '@sluice/tracing';
import type { DeliveryJob } from './domain/delivery-job.ts';
import { isDeferred, type Outcome } from './endpoint-request.ts';

/**
 * The span of one destination's part of one event, one attempt round (docs/reference/observability.md,
 * "Tracing"): a child of the trace context the event's record carried. The job returned carries the
 * span's context, so the records the round writes (attempts, retry, dead letter) continue it.
 */
export function startDelivery(
  tracing: Tracing,
  job: DeliveryJob,
  destination: Destination,
  attempt: number,
): { span: Span; job: DeliveryJob } {
  const span = tracing.start(`deliver ${destination.id}`, job.trace, {
    kind: SpanKind.CONSUMER,
    attributes: {
      'sluice.message_id': job.messageId,
      'sluice.source': job.sourceId,
      'sluice.destination': destination.id,
      'sluice.attempt': attempt,
    },
  });
  return { span, job: { ...job, trace: headersOf(span) } };
}

/** Puts the trace context on a webhook request's headers. */
export function traceRequest(headers: Record<string, string>, trace: TraceHeaders): void {
  headers[TRACEPARENT] = trace.traceparent;
  if (trace.tracestate !== undefined) headers[TRACESTATE] = trace.tracestate;
  else delete headers[TRACESTATE];
}

/**
 * One request of a delivery as a client span: the webhook's `traceparent` names this span, so a
 * receiver's own tracing joins the trace under it. Ends with the HTTP status and outcome.
 */
export function tracedRequest(
  tracing: Tracing,
  parent: Span,
  endpointRef: string,
  headers: Record<string, string>,
  send: () => Promise<Outcome>,
): Promise<Outcome> {
  const span = tracing.start('POST', inSpan(parent), {
    kind: SpanKind.CLIENT,
    attributes: { 'http.request.method': 'POST', 'sluice.endpoint': endpointRef },
  });
  traceRequest(headers, headersOf(span));
  return send().then(
    (outcome) => {
      if (isDeferred(outcome)) {
        span.setAttribute('sluice.deferred', outcome.reason);
        endSpan(span);
      } else {
        if (outcome.status !== undefined) span.setAttribute('http.response.status_code', outcome.status);
        span.setAttribute('sluice.outcome', outcome.outcome);
        endSpan(span, outcome.outcome === 'success' ? undefined : (outcome.error ?? outcome.outcome));
      }
      return outcome;
    },
    (err: unknown) => {
      endSpan(span, (err as Error).message);
      throw err;
    },
  );
}

/** Ends a delivery span with what became of the event's part. */
export function endDelivery(span: Span, decision: string | undefined, error?: string): void {
  if (decision !== undefined) span.setAttribute('sluice.decision', decision);
  endSpan(span, error);
}
