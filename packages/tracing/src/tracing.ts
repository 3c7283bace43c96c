import {
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanKind,
  type SpanOptions,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { Metadata } from '@grpc/grpc-js';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  SamplingDecision,
  type SamplingResult,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { type OtlpProtocol, type TracingSettings, tracingSettings } from './settings.ts';
import { contextOf, isSampled, type TraceHeaders } from './trace-headers.ts';

/** The instrumentation scope of every Sluice span. */
export const TRACER_NAME = 'sluice';

/**
 * A service's tracing (docs/reference/observability.md, "Tracing"). Callers test `enabled` once
 * per event and make no span at all when it is false: tracing off costs one boolean read.
 */
export interface Tracing {
  readonly enabled: boolean;
  /** The OTLP protocol spans are exported with (none when off). */
  readonly protocol?: OtlpProtocol;
  /** Starts a span continuing `parent` (headers read from a record or a request, or a context); a new trace without one. */
  start(name: string, parent: TraceHeaders | Context | undefined, options?: SpanOptions): Span;
  /**
   * Whether a step continuing `parent` makes spans at all: false when tracing is off, and, under a
   * parent-based sampler, when `parent` says not sampled or there is none — the decision is made once,
   * where the trace starts (ingest, or the producer that wrote the record), so an unsampled event
   * costs no span in any service. A step that makes none carries `parent` on as it came.
   */
  traces(parent: TraceHeaders | undefined): boolean;
  /** Exports what is buffered and stops (the service lifecycle's last step). */
  shutdown(): Promise<void>;
}

/** Tracing off: `enabled` false, nothing to flush. */
export const TRACING_OFF: Tracing = {
  enabled: false,
  start: (name) => trace.getTracer(TRACER_NAME).startSpan(name),
  traces: () => false,
  shutdown: async () => {},
};

/**
 * A parent-based sampler's root decision, extended to roots with links (a batch round): sampled when
 * any linked context is, so a batch of sampled events is exported whatever the ratio; the others as
 * `root` decides.
 */
class LinkedRootSampler implements Sampler {
  readonly #root: Sampler;
  constructor(root: Sampler) {
    this.#root = root;
  }
  shouldSample(
    context: Context,
    traceId: string,
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    links: Link[],
  ): SamplingResult {
    if (links.some((l) => (l.context.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED))
      return { decision: SamplingDecision.RECORD_AND_SAMPLED };
    return this.#root.shouldSample(context, traceId, name, kind, attributes, links);
  }
  toString(): string {
    return `LinkedRootSampler{${this.#root.toString()}}`;
  }
}

/** The sampler `OTEL_TRACES_SAMPLER`/`_ARG` name. */
export function samplerOf(settings: Extract<TracingSettings, { enabled: true }>): Sampler {
  const ratio = new TraceIdRatioBasedSampler(settings.ratio);
  switch (settings.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new LinkedRootSampler(new AlwaysOffSampler()) });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new LinkedRootSampler(ratio) });
  }
}

/** The OpenTelemetry project's OTLP exporter of the settings' protocol. */
export function exporterOf(settings: Extract<TracingSettings, { enabled: true }>): SpanExporter {
  const { url, headers } = settings;
  switch (settings.protocol) {
    case 'http/json':
      return new JsonExporter({ url, headers });
    case 'http/protobuf':
      return new ProtobufExporter({ url, headers });
    case 'grpc': {
      const metadata = new Metadata();
      for (const [key, v] of Object.entries(headers)) metadata.set(key, v);
      return new GrpcExporter({ url, metadata });
    }
  }
}

/**
 * Tracing for service `service` from the standard `OTEL_*` environment variables: off (`TRACING_OFF`)
 * unless an OTLP endpoint is set; otherwise an OTLP exporter (`exporterOf`: HTTP with JSON or
 * protobuf, or gRPC) behind a batch span
 * processor, the sampler of `OTEL_TRACES_SAMPLER`, and a resource with `service.name` plus
 * `OTEL_RESOURCE_ATTRIBUTES`. `exporter` replaces the OTLP exporter (tests).
 */
export function startTracing(service: string, env: NodeJS.ProcessEnv = process.env, exporter?: SpanExporter): Tracing {
  const settings = tracingSettings(service, env);
  if (!settings.enabled) return TRACING_OFF;
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const provider = new TracerProvider({
    resource,
    sampler: samplerOf(settings),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: exporter ?? exporterOf(settings),
        scheduledDelayMillis: settings.scheduleDelayMs,
      }),
    ],
  });
  const tracer = provider.getTracer(TRACER_NAME);
  const parentBased = settings.sampler.startsWith('parentbased_');
  return {
    enabled: true,
    protocol: settings.protocol,
    traces: (parent) => !parentBased || (parent !== undefined && isSampled(parent)),
    start: (name, parent, options = {}) =>
      tracer.startSpan(name, options, parent === undefined || 'traceparent' in parent ? contextOf(parent) : parent),
    shutdown: () => provider.shutdown(),
  };
}

/** Ends `span`, marked as an error with `message` when one is given. */
export function endSpan(span: Span, error?: string): void {
  if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
  span.end();
}
