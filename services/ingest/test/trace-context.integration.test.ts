// Whose trace a tracking call joins (docs/reference/observability.md, "Tracing"): with
// `ingest.trustTraceContext` off (the default) a caller's `traceparent` decides neither the trace
// nor sampling; on, ingest continues it. Real ingest on the real broker; spans go to an exporter
// that keeps them (the OTLP export itself is packages/tracing's test).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import type { SluiceConfig } from '@sluice/config';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { testKafka, testServiceContext, watchTopics, type TopicWatcher } from '@sluice/testkit';
import { startTracing } from '@sluice/tracing';
import { createIngest } from '../src/index.ts';
import { basic, ingestConfig, post, WRITE_KEY } from './helpers.ts';

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const SAMPLED_CALLER = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;

/** Keeps what is exported. */
function keepingExporter(): SpanExporter & { spans: ReadableSpan[] } {
  const spans: ReadableSpan[] = [];
  return {
    spans,
    export: (batch, done) => (spans.push(...batch), done({ code: 0 })),
    shutdown: async () => {},
  };
}

describe('trace context of tracking calls', () => {
  const watchers: TopicWatcher[] = [];
  after(async () => {
    await Promise.all(watchers.map((w) => w.stop()));
  });

  /**
   * One call with a sampled `traceparent` to an ingest with `trust` and `sampler` (tracing off
   * without one); what its record carries, and the spans exported by the time ingest closed.
   */
  async function call(options: { trust: boolean; sampler?: string }) {
    const config: SluiceConfig = ingestConfig({ ingest: { trustTraceContext: options.trust } });
    const ctx = testServiceContext('ingest', config);
    const exporter = keepingExporter();
    if (options.sampler !== undefined)
      ctx.tracing = startTracing(
        'ingest',
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
          OTEL_TRACES_SAMPLER: options.sampler,
          OTEL_TRACES_SAMPLER_ARG: '0',
        },
        exporter,
      );
    const service = await createIngest(ctx, { port: 0, host: '127.0.0.1' }).start();
    const watcher = await watchTopics(testKafka({ clientId: 'trace-context-reader' }), [config.kafka.topics.events]);
    watchers.push(watcher);
    const messageId = randomUUID();
    try {
      const res = await post(
        `http://127.0.0.1:${service.port}/v1/track`,
        { messageId, userId: 'u1', event: 'Traced' },
        { authorization: basic(WRITE_KEY), traceparent: SAMPLED_CALLER, tracestate: 'caller=1' },
      );
      assert.equal(res.status, 200);
      const [record] = await watcher.waitFor(config.kafka.topics.events, 1);
      assert.ok(record, 'the record');
      return { headers: record.headers, spans: exporter.spans };
    } finally {
      await service.close();
    }
  }

  test('trusted: the caller decides, and its trace is continued', async () => {
    const { headers, spans } = await call({ trust: true, sampler: 'parentbased_traceidratio' });
    assert.match(headers.traceparent!, new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-01$`));
    assert.equal(headers.tracestate, 'caller=1');
    const server = spans.find((s) => s.name === 'POST /v1/track')!;
    assert.equal(server.spanContext().traceId, CALLER_TRACE);
    assert.equal(server.parentSpanContext?.spanId, CALLER_SPAN);
  });

  test('untrusted (the default): a sampled caller does not force sampling; nothing of its context goes on', async () => {
    assert.equal(ingestConfig().ingest.trustTraceContext, false, 'the default');
    const { headers, spans } = await call({ trust: false, sampler: 'parentbased_traceidratio' });
    assert.equal(spans.length, 0, 'a root at ratio 0 is not sampled, whatever the caller says');
    assert.equal(headers.traceparent, undefined);
    assert.equal(headers.tracestate, undefined);
  });

  test('untrusted, sampled by ingest: a new trace, linked to the caller', async () => {
    const { headers, spans } = await call({ trust: false, sampler: 'always_on' });
    const server = spans.find((s) => s.name === 'POST /v1/track')!;
    const traceId = server.spanContext().traceId;
    assert.notEqual(traceId, CALLER_TRACE);
    assert.equal(server.parentSpanContext, undefined, 'a root');
    assert.deepEqual(
      server.links.map((l) => [l.context.traceId, l.context.spanId]),
      [[CALLER_TRACE, CALLER_SPAN]],
    );
    assert.match(headers.traceparent!, new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    assert.equal(headers.tracestate, undefined);
  });

  test('untrusted, tracing off: the record carries no context; trusted, as it came', async () => {
    const off = await call({ trust: false });
    assert.equal(off.headers.traceparent, undefined);
    const trusted = await call({ trust: true });
    assert.equal(trusted.headers.traceparent, SAMPLED_CALLER);
    assert.equal(trusted.headers.tracestate, 'caller=1');
  });
});
