import { CodedError } from '@sluice/errors';

/** A tracing environment variable Sluice cannot honour: the service refuses to start, naming it. */
export class TracingConfigError extends CodedError {
  constructor(message: string) {
    super('invalid_tracing_config', message, false);
  }
}

/** The samplers of the OpenTelemetry specification's `OTEL_TRACES_SAMPLER`. */
export type SamplerName =
  | 'always_on'
  | 'always_off'
  | 'traceidratio'
  | 'parentbased_always_on'
  | 'parentbased_always_off'
  | 'parentbased_traceidratio';

const SAMPLERS: readonly SamplerName[] = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
];

/** The OTLP transports of `OTEL_EXPORTER_OTLP_PROTOCOL` (the OpenTelemetry specification's three). */
export type OtlpProtocol = 'http/json' | 'http/protobuf' | 'grpc';

const PROTOCOLS: readonly OtlpProtocol[] = ['http/json', 'http/protobuf', 'grpc'];

/** What `startTracing` builds, read from the standard `OTEL_*` variables (docs/reference/observability.md, "Tracing"). */
export type TracingSettings =
  | { enabled: false; reason: 'sdk_disabled' | 'no_endpoint' | 'exporter_none' }
  | {
      enabled: true;
      serviceName: string;
      /** `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL` (default `http/json`). */
      protocol: OtlpProtocol;
      /**
       * Where spans are sent: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as is, or `OTEL_EXPORTER_OTLP_ENDPOINT`
       * + `/v1/traces` over HTTP (as is over gRPC, whose path is the service's).
       */
      url: string;
      /** `OTEL_EXPORTER_OTLP_HEADERS` then `OTEL_EXPORTER_OTLP_TRACES_HEADERS` (`k=v,k2=v2`, values URL-encoded). */
      headers: Record<string, string>;
      sampler: SamplerName;
      /** The ratio of the `traceidratio` samplers (`OTEL_TRACES_SAMPLER_ARG`, default 1). */
      ratio: number;
      /** `OTEL_BSP_SCHEDULE_DELAY`: how long finished spans wait to be exported together (default 5000 ms). */
      scheduleDelayMs: number;
    };

/** Default `OTEL_BSP_SCHEDULE_DELAY`, the specification's. */
export const DEFAULT_SCHEDULE_DELAY_MS = 5_000;
/**
 * Default `OTEL_EXPORTER_OTLP_PROTOCOL`. The specification's default is `http/protobuf`; Sluice keeps
 * JSON, which every collector takes on the same port, so a deployment that set none sends what it sent.
 */
export const DEFAULT_OTLP_PROTOCOL: OtlpProtocol = 'http/json';

const value = (env: NodeJS.ProcessEnv, name: string) => {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
};

/**
 * Reads the tracing settings of service `service` (its default `service.name` is `sluice-<service>`).
 * Tracing is off unless an OTLP endpoint is set; `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`
 * turn it off whatever else is set. Throws `TracingConfigError` on a value it cannot honour.
 */
export function tracingSettings(service: string, env: NodeJS.ProcessEnv): TracingSettings {
  if (value(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return { enabled: false, reason: 'sdk_disabled' };
  const exporter = value(env, 'OTEL_TRACES_EXPORTER');
  if (exporter === 'none') return { enabled: false, reason: 'exporter_none' };
  if (exporter !== undefined && exporter !== 'otlp')
    throw new TracingConfigError(`OTEL_TRACES_EXPORTER=${exporter}: only otlp (or none) is supported`);
  const tracesEndpoint = value(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = value(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (tracesEndpoint === undefined && endpoint === undefined) return { enabled: false, reason: 'no_endpoint' };
  let protocol: OtlpProtocol | undefined;
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const set = value(env, name);
    if (set !== undefined && !PROTOCOLS.includes(set as OtlpProtocol))
      throw new TracingConfigError(`${name}=${set}: expected one of ${PROTOCOLS.join(', ')}`);
    protocol ??= set as OtlpProtocol | undefined;
  }
  protocol ??= DEFAULT_OTLP_PROTOCOL;
  const url = tracesEndpoint ?? (protocol === 'grpc' ? endpoint! : `${endpoint!.replace(/\/+$/, '')}/v1/traces`);
  const sampler = (value(env, 'OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on') as SamplerName;
  if (!SAMPLERS.includes(sampler))
    throw new TracingConfigError(`OTEL_TRACES_SAMPLER=${sampler}: expected one of ${SAMPLERS.join(', ')}`);
  const arg = value(env, 'OTEL_TRACES_SAMPLER_ARG');
  const ratio = arg === undefined ? 1 : Number(arg);
  if (!(ratio >= 0 && ratio <= 1))
    throw new TracingConfigError(`OTEL_TRACES_SAMPLER_ARG=${arg}: expected a ratio from 0 to 1`);
  const delay = value(env, 'OTEL_BSP_SCHEDULE_DELAY');
  const scheduleDelayMs = delay === undefined ? DEFAULT_SCHEDULE_DELAY_MS : Number(delay);
  if (!(Number.isInteger(scheduleDelayMs) && scheduleDelayMs >= 0))
    throw new TracingConfigError(`OTEL_BSP_SCHEDULE_DELAY=${delay}: expected milliseconds`);
  return {
    enabled: true,
    serviceName: value(env, 'OTEL_SERVICE_NAME') ?? `sluice-${service}`,
    protocol,
    url,
    headers: {
      ...headerList(env, 'OTEL_EXPORTER_OTLP_HEADERS'),
      ...headerList(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'),
    },
    sampler,
    ratio,
    scheduleDelayMs,
  };
}

/** `k=v,k2=v2` with URL-encoded values (the specification's format for the OTLP headers variables). */
function headerList(env: NodeJS.ProcessEnv, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of value(env, name)?.split(',') ?? []) {
    const at = pair.indexOf('=');
    const key = pair.slice(0, at).trim();
    if (at <= 0 || key === '') throw new TracingConfigError(`${name}: expected key=value pairs separated by commas`);
    try {
      out[key] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new TracingConfigError(`${name}: the value of ${key} is not URL-encoded`);
    }
  }
  return out;
}
