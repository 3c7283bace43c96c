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

/** Longest `tracestate` carried on: the length the W3C Trace Context asks a vendor to keep at least. */
export const MAX_TRACESTATE_CHARS = 512;
/** Most `tracestate` list-members (the W3C limit). */
export const MAX_TRACESTATE_MEMBERS = 32;

// W3C Trace Context: version-traceid-parentid-flags in lowercase hex; version ff and all-zero ids are invalid.
const TRACEPARENT_FORMAT = /^(?!ff)[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;
// One tracestate list-member, key "=" value: a simple key or tenant@system, and a value of printable
// ASCII without "," or "=" that does not end in a space. Anything else (a control character, a line
// break, a non-ASCII byte) makes the whole header invalid.
const TRACESTATE_MEMBER =
  /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
// Optional whitespace around a list-member (spaces and tabs only).
const OWS = /^[ \t]+|[ \t]+$/g;

type HeaderValue = Buffer | string | readonly (Buffer | string)[] | undefined;

const text = (v: HeaderValue): string | undefined => {
  const one = Array.isArray(v) ? v[0] : (v as Buffer | string | undefined);
  return one === undefined ? undefined : typeof one === 'string' ? one : one.toString('latin1');
};

/** Trace headers dropped as invalid since the process started, per header name. */
const dropped = { [TRACE_PARENT_HEADER]: 0, [TRACE_STATE_HEADER]: 0 };

/**
 * How many `traceparent` and `tracestate` headers `traceHeadersOf` dropped as invalid in this process
 * (the `sluice_trace_headers_dropped_total` metric).
 */
export function droppedTraceHeaders(): Readonly<Record<'traceparent' | 'tracestate', number>> {
  return dropped;
}

/** Whether `state` is a `tracestate` the W3C grammar allows: list-members, at most 32, keys unique, 512 characters at most. */
export function isValidTracestate(state: string): boolean {
  if (state.length > MAX_TRACESTATE_CHARS) return false;
  const keys = new Set<string>();
  for (const part of state.split(',')) {
    const member = part.replace(OWS, '');
    if (member === '') continue;
    if (!TRACESTATE_MEMBER.test(member)) return false;
    const key = member.slice(0, member.indexOf('='));
    if (keys.has(key)) return false;
    keys.add(key);
  }
  return keys.size <= MAX_TRACESTATE_MEMBERS;
}

/**
 * The trace context in `headers` (a Kafka record's or an HTTP request's), or undefined when there is
 * none or its `traceparent` does not follow the W3C grammar: a bad header is dropped, never carried
 * on. An invalid `tracestate` (bad grammar, over 32 members or `MAX_TRACESTATE_CHARS`) is dropped,
 * the `traceparent` kept. Each drop is counted (`droppedTraceHeaders`).
 */
export function traceHeadersOf(headers: Readonly<Record<string, HeaderValue>> | undefined): TraceHeaders | undefined {
  if (headers === undefined) return undefined;
  const raw = text(headers[TRACEPARENT]);
  if (raw === undefined) return undefined;
  const parent = raw.replace(OWS, '');
  if (parent.length !== 55 || !TRACEPARENT_FORMAT.test(parent)) {
    dropped[TRACEPARENT] += 1;
    return undefined;
  }
  const state = text(headers[TRACESTATE])?.replace(OWS, '');
  if (state === undefined || state === '') return { traceparent: parent };
  if (!isValidTracestate(state)) {
    dropped[TRACESTATE] += 1;
    return { traceparent: parent };
  }
  return { traceparent: parent, tracestate: state };
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
