import { type Attributes, type Context, type Link, ROOT_CONTEXT, type Span, trace } from '@opentelemetry/api';
import { TRACE_PARENT_HEADER, TRACE_STATE_HEADER, W3CTraceContextPropagator } from '@opentelemetry/core';

/** The W3C Trace Context of one event as it travels in Kafka record headers and HTTP headers. */
export type TraceHeaders = {
  traceparent: string;
  tracestate?: string;
};

/** The header names (W3C Trace Context), the same on Kafka records, ingest's requests and webhooks. */
export const TRACEPARENT = TRACE_PARENT_HEADER;
export const TRACESTATE = TRACE_STATE_HEADER;

/** Longest `tracestate` carried on (the W3C limit is 32 members; 512 characters is what it asks to keep). */
export const MAX_TRACESTATE_CHARS = 512;

// version-traceid-parentid-flags; version ff and all-zero ids are invalid.
const TRACEPARENT_FORMAT = /^(?!ff)[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

type HeaderValue = Buffer | string | readonly (Buffer | string)[] | undefined;

const text = (v: HeaderValue): string | undefined => {
  const one = Array.isArray(v) ? v[0] : (v as Buffer | string | undefined);
  return one === undefined ? undefined : typeof one === 'string' ? one : one.toString('latin1');
};

/**
 * The trace context in `headers` (a Kafka record's or an HTTP request's), or undefined when there is
 * none or its `traceparent` is malformed: a bad header is dropped, never carried on. A `tracestate`
 * over `MAX_TRACESTATE_CHARS` is dropped, the `traceparent` kept.
 */
export function traceHeadersOf(headers: Readonly<Record<string, HeaderValue>> | undefined): TraceHeaders | undefined {
  if (headers === undefined) return undefined;
  const parent = text(headers[TRACEPARENT])?.trim().toLowerCase();
  if (parent === undefined || parent.length !== 55 || !TRACEPARENT_FORMAT.test(parent)) return undefined;
  const state = text(headers[TRACESTATE])?.trim();
  return state && state.length <= MAX_TRACESTATE_CHARS
    ? { traceparent: parent, tracestate: state }
    : { traceparent: parent };
}

/** The sampled flag of a `traceparent` (bit 0 of its trace flags). */
export function isSampled(headers: TraceHeaders): boolean {
  return (Number.parseInt(headers.traceparent.slice(53, 55), 16) & 1) === 1;
}

/** The 32-hex-digit trace id of a `traceparent` (validated by `traceHeadersOf`). */
export function traceIdOf(headers: TraceHeaders): string {
  return headers.traceparent.slice(3, 35);
}

const propagator = new W3CTraceContextPropagator();
const getter = {
  keys: (c: TraceHeaders) => Object.keys(c),
  get: (c: TraceHeaders, key: string) =>
    key === TRACEPARENT ? c.traceparent : key === TRACESTATE ? c.tracestate : undefined,
};

/** The context a span continuing `headers` starts in (the root context when there are none). */
export function contextOf(headers: TraceHeaders | undefined): Context {
  return headers === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, headers, getter);
}

/** The headers that make the next hop a child of `span` (its sampled flag included). */
export function headersOf(span: Span): TraceHeaders {
  const carrier: Partial<TraceHeaders> = {};
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, {
    set: (c, key, v) => {
      if (key === TRACEPARENT) c.traceparent = v;
      else if (key === TRACESTATE) c.tracestate = v;
    },
  });
  return carrier as TraceHeaders;
}

/** A span link to the span `headers` name. */
export function linkTo(headers: TraceHeaders, attributes: Attributes = {}): Link | undefined {
  const context = trace.getSpanContext(contextOf(headers));
  return context && { context, attributes };
}

/** The context of `span`, to start its children in. */
export function inSpan(span: Span): Context {
  return trace.setSpan(ROOT_CONTEXT, span);
}
