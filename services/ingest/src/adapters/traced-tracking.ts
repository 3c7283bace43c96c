import type { IncomingMessage } from 'node:http';
import type { CallType } from '@sluice/envelope';
import { endSpan, headersOf, inSpan, linkTo, SpanKind, type TraceHeaders, type Tracing } from '@sluice/tracing';
import { IngestError } from '../errors.ts';
import type { ApiDeps } from './api-deps.ts';
import type { RateLimiter } from '../domain/rate-limiter.ts';
import { handleTracking } from './tracking-route.ts';

/** One tracking request as `tracedTracking` traces it. */
export interface TracedCall {
  route: CallType | 'batch';
  path: string;
  /** The context the server span continues (a trusted caller's); none: a new trace. */
  parent: TraceHeaders | undefined;
  /** The caller's context, linked to when it is not the parent (an untrusted caller). */
  caller: TraceHeaders | undefined;
}

/**
 * A tracking request with tracing on: a server span continuing the trusted caller's `traceparent`
 * (or starting a trace, linked to an untrusted caller's), and in it a producer span from the
 * records' hand-over to Kafka's ack, whose context the records carry (docs/reference/observability.md,
 * "Tracing").
 */
export async function tracedTracking(
  tracing: Tracing,
  deps: ApiDeps & { rateLimiter: RateLimiter },
  req: IncomingMessage,
  call: TracedCall,
): Promise<{ status: number; body: string }> {
  const { route, path, parent, caller } = call;
  const span = tracing.start(`POST ${path}`, parent, {
    kind: SpanKind.SERVER,
    attributes: { 'http.request.method': 'POST', 'http.route': path },
  });
  // Added once the span exists, so the sampler never sees it: the caller's sampled flag decides nothing.
  const link = parent === undefined && caller !== undefined ? linkTo(caller) : undefined;
  if (link) span.addLink(link);
  try {
    const result = await handleTracking(deps, req, route, (sourceId) => {
      span.setAttribute('sluice.source', sourceId);
      const produce = tracing.start(`${deps.config.current.kafka.topics.events} publish`, inSpan(span), {
        kind: SpanKind.PRODUCER,
        attributes: {
          'messaging.system': 'kafka',
          'messaging.operation.type': 'send',
          'messaging.destination.name': deps.config.current.kafka.topics.events,
        },
      });
      // A trace started here and not sampled, under a parent-based sampler, ends here: no service
      // after would make a span of it, so its records carry no context (and cost no headers).
      const headers = headersOf(produce);
      const carried = parent !== undefined || tracing.traces(headers) ? headers : undefined;
      return { headers: carried, end: (error) => endSpan(produce, error) };
    });
    span.setAttribute('http.response.status_code', result.status);
    endSpan(span);
    return result;
  } catch (err) {
    const status = err instanceof IngestError ? err.status : 500;
    span.setAttribute('http.response.status_code', status);
    endSpan(span, status >= 500 ? (err as Error).message : undefined);
    throw err;
  }
}
