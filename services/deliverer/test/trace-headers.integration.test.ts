// An upstream producer writes straight to the events topic with a `tracestate` no HTTP client may
// send (a line break, a control character): the deliverer drops the header and delivers the event,
// and the endpoint's breaker stays closed for everyone (docs/reference/observability.md, "Tracing").
// Real broker, real deliverer, real receiver on 127.0.0.1; tracing off, so the record's context is
// what the webhook carries.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createJsonCodec } from '@sluice/codec';
import type { SluiceConfig } from '@sluice/config';
import { recordKey, RETRY_HEADERS, type AttemptEvent } from '@sluice/envelope';
import {
  metricSum,
  receivedEnvelope,
  scrapeMetrics,
  startReceiver,
  testConfig,
  testKafka,
  testServiceContext,
  uniqueName,
  waitUntil,
  watchTopics,
  type Receiver,
} from '@sluice/testkit';
import type { Kafka } from 'kafkajs';
import { createDeliverer, type DelivererService } from '../src/index.ts';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const BAD_TRACESTATES = ['a=b\r\nx: 1', 'a=b\nx', 'a=b\u0000', 'a=b\u0007c', 'vendor=\u00e9t\u00e9', 'a=b\r'];

describe('a record with an invalid tracestate on the events topic', () => {
  let receiver: Receiver;
  let service: DelivererService;
  let kafka: Kafka;
  let collected: Awaited<ReturnType<typeof watchTopics>>;
  let config: SluiceConfig;

  before(async () => {
    receiver = await startReceiver();
    config = testConfig({
      sources: [{ id: 's-trace', writeKeys: ['k-trace'] }],
      destinations: [
        { id: 'd-trace', type: 'webhooks', sourceIds: ['s-trace'], settings: { webhooks: [{ url: receiver.url }] } },
      ],
      // Fewer failures than bad records open the breaker, and for longer than the test.
      delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] }, circuitBreaker: { failures: 3, cooldown: '10m' } },
    });
    service = await createDeliverer(testServiceContext('deliverer', config), { port: 0 }).start();
    kafka = testKafka({ clientId: uniqueName('trace-headers') });
    const t = config.kafka.topics;
    collected = await watchTopics(kafka, [t.retry, t.deadLetter, t.attempts]);
  });

  after(async () => {
    await service?.close();
    await collected?.stop();
    await receiver?.close();
  });

  it('is delivered without the bad header and does not open the breaker; a valid tracestate goes on', async () => {
    const codec = createJsonCodec();
    const run = uniqueName('ts');
    const bad = BAD_TRACESTATES.map((tracestate, i) => ({ id: `${run}-bad-${i}`, tracestate }));
    const good = { id: `${run}-good`, tracestate: 'vendor=abc,other@sys=x y' };
    const producer = kafka.producer();
    await producer.connect();
    for (const { id, tracestate } of [...bad, good]) {
      const envelope = receivedEnvelope({ sourceId: 's-trace', messageId: id });
      await producer.send({
        topic: config.kafka.topics.events,
        messages: [
          {
            key: recordKey(envelope),
            value: await codec.encode(envelope),
            headers: { traceparent: TRACEPARENT, tracestate: Buffer.from(tracestate, 'latin1') },
          },
        ],
      });
    }
    await producer.disconnect();

    const requestOf = (id: string) => receiver.requests.find((r) => r.headers['x-message-id'] === id);
    await waitUntil(() => [...bad, good].every((e) => requestOf(e.id)), 30_000, 'every event delivered');
    for (const { id } of bad) {
      assert.equal(requestOf(id)!.headers.traceparent, TRACEPARENT, 'the valid traceparent goes on');
      assert.equal(requestOf(id)!.headers.tracestate, undefined, 'the invalid tracestate is dropped');
    }
    assert.equal(requestOf(good.id)!.headers.tracestate, good.tracestate);

    const t = config.kafka.topics;
    const ours = (id: string) => id.startsWith(run);
    await waitUntil(
      () =>
        collected
          .records(t.attempts)
          .map((x) => JSON.parse(x.value!.toString()) as AttemptEvent)
          .filter((a) => ours(a.messageId) && a.outcome === 'success').length ===
        bad.length + 1,
      30_000,
      'one successful attempt per event',
    );
    const attempts = collected
      .records(t.attempts)
      .map((x) => JSON.parse(x.value!.toString()) as AttemptEvent)
      .filter((a) => ours(a.messageId));
    assert.deepEqual(
      attempts.filter((a) => a.outcome !== 'success'),
      [],
      'no failed or deferred attempt',
    );
    for (const topic of [t.retry, t.deadLetter])
      assert.equal(
        collected.records(topic).filter((x) => ours(String(x.headers[RETRY_HEADERS.messageId]))).length,
        0,
        topic,
      );

    const metrics = await scrapeMetrics(service.port);
    assert.equal(metricSum(metrics, 'sluice_deliverer_circuit_open'), 0, 'the breaker stays closed');
    assert.match(metrics, /sluice_trace_headers_dropped_total\{header="tracestate"[^}]*\} 6\b/);
    assert.match(metrics, /sluice_trace_headers_dropped_total\{header="traceparent"[^}]*\} 0\b/);
  });
});
