export { SpanKind, type Span, type Attributes, type Link } from '@opentelemetry/api';
export {
  DEFAULT_OTLP_PROTOCOL,
  DEFAULT_SCHEDULE_DELAY_MS,
  TracingConfigError,
  tracingSettings,
  type OtlpProtocol,
  type SamplerName,
  type TracingSettings,
} from './settings.ts';
export {
  contextOf,
  droppedTraceHeaders,
  headersOf,
  inSpan,
  isSampled,
  linkTo,
  MAX_TRACESTATE_CHARS,
  TRACEPARENT,
  traceHeadersOf,
  traceIdOf,
  TRACESTATE,
  type TraceHeaders,
} from './trace-headers.ts';
export { endSpan, samplerOf, startTracing, TRACER_NAME, TRACING_OFF, type Tracing } from './tracing.ts';
