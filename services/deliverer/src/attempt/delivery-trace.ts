import type { Destination } from '@sluice/config';
import {
  endSpan,
  linkTo,
  type Link,
  headersOf,
  inSpan,
  type Span,
  SpanKind,
  TRACEPARENT,
  type TraceHeaders,
  TRACESTATE,
  type Tracing,
} from '@sluice/tracing';
import type { DeliveryJob } from '../intake/delivery-job.ts';
import { isDeferred, type Outcome } from './endpoint-request.ts';

/** One destination's part of one event, one attempt round: what its span is named and labelled by. */
export interface DeliveryRound {
  destination: Destination;
  /** 1-based number of the attempt. */
  attempt: number;
}

/**
 * The span of one destination's part of one event, one attempt round (docs/reference/observability.md,
 * "Tracing"): a child of the trace context the event's record carried. The job returned carries the
 * span's context, so the records the round writes (attempts, retry, dead letter) continue it.
 */
export function startDelivery(
  tracing: Tracing,
  job: DeliveryJob,
  round: DeliveryRound,
): { span: Span; job: DeliveryJob } {
  const { destination, attempt } = round;
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

/** The span limit on links (the SDK's default): a batch links this many of its events' traces. */
export const MAX_BATCH_LINKS = 128;

/** One batch request round: whose batch, and its id. */
export interface BatchRound {
  destinationId: string;
  batchId: string;
}

/**
 * The span of one batch request round (docs/reference/batches.md): its events come from many
 * traces, so it starts a trace of its own, linked to the first `MAX_BATCH_LINKS` sampled events'
 * contexts; its attempts are its children and the request carries the attempt's `traceparent`.
 * Under a parent-based sampler a batch none of whose events is sampled makes no span.
 */
export function startBatch(tracing: Tracing, jobs: readonly DeliveryJob[], batch: BatchRound): Span | undefined {
  const { destinationId, batchId } = batch;
  const links: Link[] = [];
  for (const job of jobs) {
    if (links.length === MAX_BATCH_LINKS) break;
    if (job.trace === undefined || !tracing.traces(job.trace)) continue;
    const link = linkTo(job.trace, { 'sluice.message_id': job.messageId });
    if (link) links.push(link);
  }
  // None of its events sampled, under a parent-based sampler: no span, as for each of them alone.
  if (links.length === 0 && !tracing.traces(undefined)) return undefined;
  return tracing.start(`deliver batch ${destinationId}`, undefined, {
    kind: SpanKind.CONSUMER,
    links,
    attributes: { 'sluice.destination': destinationId, 'sluice.batch_id': batchId, 'sluice.batch_size': jobs.length },
  });
}

/** Puts the trace context on a webhook request's headers. */
export function traceRequest(headers: Record<string, string>, trace: TraceHeaders): void {
  headers[TRACEPARENT] = trace.traceparent;
  if (trace.tracestate !== undefined) headers[TRACESTATE] = trace.tracestate;
  else delete headers[TRACESTATE];
}

/** One request of a delivery as `tracedRequest` sees it. */
export interface TracedRequest {
  /** The delivery's (or batch's) span. */
  parent: Span;
  /** The endpoint's redacted URL. */
  endpointRef: string;
  /** The request's headers: its `traceparent` and `tracestate` are set to the request's span. */
  headers: Record<string, string>;
}

/**
 * One request of a delivery as a client span: the webhook's `traceparent` names this span, so a
 * receiver's own tracing joins the trace under it. Ends with the HTTP status and outcome.
 */
export function tracedRequest(
  tracing: Tracing,
  request: TracedRequest,
  send: () => Promise<Outcome>,
): Promise<Outcome> {
  const { parent, endpointRef, headers } = request;
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
