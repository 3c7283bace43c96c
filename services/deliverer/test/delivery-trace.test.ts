import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { startReceiver, testConfig, type Receiver } from '@sluice/testkit';
import { startTracing, TRACING_OFF, type Tracing } from '@sluice/tracing';
import { deliveryRig } from './delivery-rig.ts';

// The trace context through one attempt round of the real Delivery, a real undici client and a real
// receiver on 127.0.0.1 answering 503; the Kafka side is a recording sink. Spans go to the SDK's
// in-memory exporter (the OTLP export itself is test/e2e/tracing.e2e.test.ts).

const SAMPLED = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const UNSAMPLED = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';

/** Keeps what is exported (the SDK's in-memory exporter forgets it at shutdown, which is what flushes). */
function keepingExporter(): SpanExporter & { spans: ReadableSpan[] } {
  const spans: ReadableSpan[] = [];
  return {
    spans,
    export: (batch, done) => (spans.push(...batch), done({ code: 0 })),
    shutdown: async () => {},
  };
}

describe('trace context through a delivery', () => {
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver({ behaviour: () => ({ status: 503, body: 'busy' }) });
  });
  after(() => receiver.close());

  async function attemptOnce(tracing: Tracing, traceparent: string) {
    const config = testConfig({
      sources: [{ id: 's', writeKeys: ['k'] }],
      destinations: [{ id: 'd', type: 'webhooks', sourceIds: ['s'], settings: { webhooks: [{ url: receiver.url }] } }],
      delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
    });
    const { delivery, sent, close } = deliveryRig(config, { connections: 1, tracing });
    const before = receiver.requests.length;
    const messageId = `m-${before}`;
    const job = {
      key: 's:u',
      body: Buffer.from('{"type":"track"}'),
      messageId,
      sourceId: 's',
      destinationId: 'd',
      eventType: 'track',
      endpoints: config.destinations[0]!.endpoints.map((e) => e.ref),
      trace: { traceparent },
    };
    const decision = await delivery.run(job, config.destinations[0]!);
    await close();
    const header = (topic: string) => {
      const record = sent.find((s) => s.topic === topic);
      return String(record?.message.headers?.traceparent);
    };
    return {
      decision,
      request: String(receiver.requests[before]!.headers.traceparent),
      retry: header(config.kafka.topics.retry),
      attempt: header(config.kafka.topics.attempts),
    };
  }

  it('tracing off: the request and every record carry the event context as it came', async () => {
    const r = await attemptOnce(TRACING_OFF, SAMPLED);
    assert.equal(r.decision.kind, 'retry');
    assert.deepEqual([r.request, r.retry, r.attempt], [SAMPLED, SAMPLED, SAMPLED]);
  });

  it('tracing on: a delivery span with an attempt child; the request names the attempt, the records the delivery', async () => {
    const exporter = keepingExporter();
    const tracing = startTracing('deliverer', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }, exporter);
    const r = await attemptOnce(tracing, SAMPLED);
    await tracing.shutdown();
    const spans = exporter.spans;
    const deliver = spans.find((s) => s.name === 'deliver d')!;
    const post = spans.find((s) => s.name === 'POST')!;
    assert.equal(deliver.parentSpanContext?.spanId, 'b7ad6b7169203331');
    assert.equal(post.parentSpanContext?.spanId, deliver.spanContext().spanId);
    assert.equal(post.attributes['http.response.status_code'], 503);
    assert.equal(deliver.attributes['sluice.decision'], 'retry');
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    assert.equal(r.request, `00-${traceId}-${post.spanContext().spanId}-01`);
    assert.equal(r.retry, `00-${traceId}-${deliver.spanContext().spanId}-01`);
    assert.equal(r.attempt, r.retry);
  });

  it('tracing on, an unsampled parent under a parent-based sampler: no span, the context carried as it came', async () => {
    const exporter = keepingExporter();
    const tracing = startTracing('deliverer', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }, exporter);
    const r = await attemptOnce(tracing, UNSAMPLED);
    await tracing.shutdown();
    assert.equal(exporter.spans.length, 0);
    assert.deepEqual([r.request, r.retry], [UNSAMPLED, UNSAMPLED]);
  });
});
