import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { startOtlpGrpcReceiver, startOtlpReceiver, waitUntil } from '@sluice/testkit';
import { ParentBasedSampler, SamplingDecision } from '@opentelemetry/sdk-trace';
import { ROOT_CONTEXT, type SpanContext, SpanKind, trace } from '@opentelemetry/api';
import {
  contextOf,
  droppedTraceHeaders,
  endSpan,
  type OtlpProtocol,
  headersOf,
  isSampled,
  samplerOf,
  startTracing,
  traceHeadersOf,
  traceIdOf,
  TRACING_OFF,
  TracingConfigError,
  tracingSettings,
} from '../src/index.ts';
import { isValidTracestate } from '../src/trace-headers.ts';

const PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const UNSAMPLED = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';

describe('trace headers', () => {
  test('a valid traceparent is read from a string or a Buffer, with its tracestate', () => {
    assert.deepEqual(traceHeadersOf({ traceparent: Buffer.from(PARENT), tracestate: 'a=1' }), {
      traceparent: PARENT,
      tracestate: 'a=1',
    });
    assert.equal(traceIdOf(traceHeadersOf({ traceparent: PARENT })!), '0af7651916cd43dd8448eb211c80319c');
  });

  test('a traceparent off the W3C grammar is dropped, and counted', () => {
    const before = droppedTraceHeaders().traceparent;
    const bad = [
      '',
      'garbage',
      `${PARENT}-extra`,
      PARENT.toUpperCase(),
      `${PARENT}\r\nx: 1`,
      '00-00000000000000000000000000000000-b7ad6b7169203331-01',
      '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01',
      'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      '00-0af7651916cd43dd8448eb211c80319g-b7ad6b7169203331-01',
      '00_0af7651916cd43dd8448eb211c80319c_b7ad6b7169203331_01',
    ];
    for (const traceparent of bad) assert.equal(traceHeadersOf({ traceparent }), undefined, traceparent);
    assert.equal(droppedTraceHeaders().traceparent - before, bad.length);
    assert.equal(traceHeadersOf(undefined), undefined);
    assert.equal(traceHeadersOf({}), undefined);
    assert.equal(droppedTraceHeaders().traceparent - before, bad.length, 'no header is not a drop');
  });

  test('tracestate: list-members per the W3C grammar are kept; anything else drops it, the traceparent kept', () => {
    const members = (n: number) => Array.from({ length: n }, (_, i) => `k${i}=v`).join(',');
    for (const good of [
      'a=1',
      'vendor=abc, other@sys=x y',
      ' a=1 ,\tb=2 ',
      'a=1,,b=2',
      'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7',
      '0tenant@sys-1=v',
      `k=${'v'.repeat(256)}`,
      members(32),
    ])
      assert.equal(isValidTracestate(good), true, good);
    const before = droppedTraceHeaders().tracestate;
    const bad = [
      'a=b\r\nx: 1',
      'a=b\nx',
      'a=b\u0000',
      'a=b\u00e9',
      'A=1',
      'a',
      'a=',
      'a=b ,=c',
      'a=x=y',
      'a=b\u007f',
      'a=1,a=2',
      '1a=1',
      'tenant@Sys=1',
      `k=${'v'.repeat(257)}`,
      members(33),
      `a=${'v'.repeat(200)},b=${'v'.repeat(200)},c=${'v'.repeat(200)}`,
    ];
    for (const tracestate of bad) {
      assert.equal(isValidTracestate(tracestate), false, JSON.stringify(tracestate));
      assert.deepEqual(traceHeadersOf({ traceparent: PARENT, tracestate }), { traceparent: PARENT });
    }
    assert.equal(droppedTraceHeaders().tracestate - before, bad.length);
    assert.deepEqual(traceHeadersOf({ traceparent: PARENT, tracestate: ' vendor=abc ' }), {
      traceparent: PARENT,
      tracestate: 'vendor=abc',
    });
  });

  test('extract then inject keeps the trace id and the sampled flag', () => {
    for (const parent of [PARENT, UNSAMPLED]) {
      const span = trace.wrapSpanContext(trace.getSpanContext(contextOf({ traceparent: parent }))!);
      assert.equal(headersOf(span).traceparent, parent);
    }
    assert.equal(trace.getSpanContext(contextOf(undefined)), undefined);
  });
});

describe('settings', () => {
  test('off unless an OTLP endpoint is set; OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none win', () => {
    assert.deepEqual(tracingSettings('ingest', {}), { enabled: false, reason: 'no_endpoint' });
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    assert.equal(tracingSettings('ingest', endpoint).enabled, true);
    assert.equal(tracingSettings('ingest', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://x/v1/traces' }).enabled, true);
    assert.equal(tracingSettings('ingest', { ...endpoint, OTEL_SDK_DISABLED: 'true' }).enabled, false);
    assert.equal(tracingSettings('ingest', { ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).enabled, false);
    assert.equal(startTracing('ingest', {}), TRACING_OFF);
  });

  test('defaults: sluice-<service>, parent-based always on, 5 s export delay', () => {
    assert.deepEqual(tracingSettings('retry', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://h' }), {
      enabled: true,
      serviceName: 'sluice-retry',
      protocol: 'http/json',
      url: 'http://h/v1/traces',
      headers: {},
      sampler: 'parentbased_always_on',
      ratio: 1,
      scheduleDelayMs: 5_000,
    });
  });

  test('values it cannot honour are refused, naming the variable', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://h' };
    for (const [name, v] of [
      ['OTEL_EXPORTER_OTLP_PROTOCOL', 'http/xml'],
      ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'json'],
      ['OTEL_TRACES_SAMPLER', 'sometimes'],
      ['OTEL_TRACES_SAMPLER_ARG', '1.5'],
      ['OTEL_TRACES_EXPORTER', 'zipkin'],
      ['OTEL_BSP_SCHEDULE_DELAY', 'soon'],
      ['OTEL_EXPORTER_OTLP_HEADERS', 'no-equals-sign'],
    ] as const)
      assert.throws(
        () => tracingSettings('ingest', { ...endpoint, [name]: v }),
        (err: Error) => {
          return err instanceof TracingConfigError && err.message.startsWith(name);
        },
      );
  });

  test('parentbased_traceidratio: the parent decides; a root is sampled by its trace id at the ratio', () => {
    const settings = tracingSettings('ingest', {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://h',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.01',
    });
    assert.ok(settings.enabled);
    const sampler = samplerOf(settings);
    assert.ok(sampler instanceof ParentBasedSampler);
    const decide = (ctx = ROOT_CONTEXT, traceId = '0af7651916cd43dd8448eb211c80319c') =>
      sampler.shouldSample(ctx, traceId, 'x', SpanKind.INTERNAL, {}, []).decision;
    assert.equal(decide(contextOf({ traceparent: PARENT })), SamplingDecision.RECORD_AND_SAMPLED);
    assert.equal(decide(contextOf({ traceparent: UNSAMPLED })), SamplingDecision.NOT_RECORD);
    // Roots: about 1 % of random trace ids (binomial, 20,000 draws: 200 ± 5 σ).
    let sampled = 0;
    for (let i = 0; i < 20_000; i++)
      if (decide(ROOT_CONTEXT, randomBytes(16).toString('hex')) === SamplingDecision.RECORD_AND_SAMPLED) sampled += 1;
    assert.ok(sampled > 130 && sampled < 270, `sampled ${sampled} of 20,000`);
    // A root linked to a sampled context (a batch of sampled events) is sampled; linked to unsampled ones, as any root.
    const link = (parent: string) => ({ context: trace.getSpanContext(contextOf({ traceparent: parent }))! });
    const rootWith = (links: { context: SpanContext }[]) =>
      sampler.shouldSample(ROOT_CONTEXT, 'ffffffffffffffffffffffffffffffff', 'x', SpanKind.CONSUMER, {}, links)
        .decision;
    assert.equal(rootWith([link(UNSAMPLED), link(PARENT)]), SamplingDecision.RECORD_AND_SAMPLED);
    let linkedUnsampled = 0;
    for (let i = 0; i < 2_000; i++)
      if (
        sampler.shouldSample(ROOT_CONTEXT, randomBytes(16).toString('hex'), 'x', SpanKind.CONSUMER, {}, [
          link(UNSAMPLED),
        ]).decision === SamplingDecision.RECORD_AND_SAMPLED
      )
        linkedUnsampled += 1;
    assert.ok(linkedUnsampled < 100, `${linkedUnsampled} of 2,000`);
  });
});

const RECEIVERS = {
  'http/json': startOtlpReceiver,
  'http/protobuf': startOtlpReceiver,
  grpc: startOtlpGrpcReceiver,
} as const;
const CONTENT_TYPES = {
  'http/json': 'application/json',
  'http/protobuf': 'application/x-protobuf',
  grpc: 'application/grpc',
};

for (const [protocol, start] of Object.entries(RECEIVERS) as [OtlpProtocol, typeof startOtlpReceiver][]) {
  test(`${protocol}: spans reach a real OTLP receiver with the service name and the parent of the headers`, async () => {
    const receiver = await start();
    try {
      const tracing = startTracing('ingest', {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test',
      });
      const span = tracing.start('ingest request', { traceparent: PARENT }, { kind: SpanKind.SERVER });
      span.setAttribute('sluice.attempt', 3);
      const child = tracing.start('produce', trace.setSpan(ROOT_CONTEXT, span));
      child.end();
      endSpan(span, 'failed');
      await tracing.shutdown();
      await waitUntil(() => receiver.count === 2);
      assert.ok(receiver.contentTypes.length > 0);
      for (const type of receiver.contentTypes) assert.ok(type.startsWith(CONTENT_TYPES[protocol]), type);
      const [produce, request] = receiver.spans;
      assert.equal(request!.service, 'sluice-ingest');
      assert.equal(request!.name, 'ingest request');
      assert.equal(request!.traceId, '0af7651916cd43dd8448eb211c80319c');
      assert.equal(request!.parentSpanId, 'b7ad6b7169203331');
      assert.equal(request!.kind, 2);
      assert.equal(request!.status, 2);
      assert.equal(request!.attributes['sluice.attempt'], 3);
      assert.equal(produce!.parentSpanId, request!.spanId);
    } finally {
      await receiver.close();
    }
  });
}

test('the protocol variables: the traces one wins; gRPC takes the endpoint as is', () => {
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317' };
  const of = (env: Record<string, string>) => {
    const s = tracingSettings('ingest', { ...endpoint, ...env });
    assert.ok(s.enabled);
    return [s.protocol, s.url];
  };
  assert.deepEqual(of({}), ['http/json', 'http://collector:4317/v1/traces']);
  assert.deepEqual(of({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }), [
    'http/protobuf',
    'http://collector:4317/v1/traces',
  ]);
  assert.deepEqual(of({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), ['grpc', 'http://collector:4317']);
  assert.deepEqual(of({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' }), [
    'http/json',
    'http://collector:4317/v1/traces',
  ]);
  assert.throws(
    () => of({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grcp' }),
    /^TracingConfigError: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grcp: expected one of http\/json, http\/protobuf, grpc$/,
  );
});

test('the endpoint and headers variables', () => {
  const s = tracingSettings('ingest', {
    OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector:4318/',
    OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-a=1',
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-a=2',
  });
  assert.ok(s.enabled);
  assert.equal(s.url, 'https://collector:4318/v1/traces');
  assert.deepEqual(s.headers, { authorization: 'Bearer abc', 'x-a': '2' });
  const t = tracingSettings('ingest', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c/custom' });
  assert.ok(t.enabled);
  assert.equal(t.url, 'http://c/custom');
});

test('traces(): off never; parent-based samplers skip an unsampled parent; others always make spans', async () => {
  assert.equal(TRACING_OFF.traces(undefined), false);
  assert.equal(isSampled({ traceparent: PARENT }), true);
  assert.equal(isSampled({ traceparent: UNSAMPLED }), false);
  assert.equal(isSampled({ traceparent: PARENT.replace(/01$/, '03') }), true);
  const on = (sampler: string) =>
    startTracing('deliverer', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_TRACES_SAMPLER: sampler });
  const parentBased = on('parentbased_traceidratio');
  const always = on('always_on');
  try {
    assert.equal(parentBased.traces({ traceparent: UNSAMPLED }), false);
    assert.equal(parentBased.traces({ traceparent: PARENT }), true);
    // Under a parent-based sampler the decision is made where the trace starts: no context, no spans.
    assert.equal(parentBased.traces(undefined), false);
    assert.equal(always.traces({ traceparent: UNSAMPLED }), true);
  } finally {
    await parentBased.shutdown();
    await always.shutdown();
  }
});
