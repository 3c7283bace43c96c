import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import type { SluiceConfig } from '@sluice/config';
import { RETRY_HEADERS, retryStateFromHeaders, retryStateToHeaders, type AttemptEvent } from '@sluice/envelope';
import { ensureTopics } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { sleep, startReceiver, testConfig, testServiceContext, waitUntil, type Receiver } from '@sluice/testkit';
import { receivedEnvelope, testKafka, watchTopics } from '@sluice/testkit';
import { topicSpecs } from '@sluice/topology';
import type { Kafka } from 'kafkajs';
import { createDeliverer, type DelivererService } from '../src/index.ts';
import { produceEvents } from './kafka-helpers.ts';

const ev = (messageId: string) => receivedEnvelope({ messageId, event: 'Lagged' });

function setup(receiverUrl: string, extra: Record<string, unknown>): SluiceConfig {
  return testConfig({
    sources: [{ id: 's', writeKeys: ['k'] }],
    destinations: [{ id: 'd', type: 'webhooks', sourceIds: ['s'], settings: { webhooks: [{ url: receiverUrl }] } }],
    delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
    ...extra,
  });
}

describe('the deliverer enforces the window under consumer lag (real Kafka, real receiver)', () => {
  const closers: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const close of closers.reverse()) await close();
  });

  it('events that waited longer than the window, and a retry past its window, are dead-lettered window_exhausted; the receiver gets nothing of them', async () => {
    const receiver: Receiver = await startReceiver();
    closers.push(() => receiver.close());
    const config = setup(receiver.url, { retry: { window: '2s' } });
    const ctx = testServiceContext('deliverer', config);
    const kafka: Kafka = testKafka({ clientId: 'window-test' });
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, topicSpecs(config));
    await admin.disconnect();
    const t = config.kafka.topics;

    // The deliverer is not running: 20 events wait in sluice.events, one retry in sluice.redeliver.
    const lagged = Array.from({ length: 20 }, (_, i) => ev(`lagged-${i}`));
    await produceEvents(kafka, t.events, lagged);
    const history = [
      {
        attempt: 1,
        endpoint: receiver.url,
        at: Date.now() - 10_000,
        outcome: 'retryable' as const,
        status: 503,
        error: 'http_503',
        latencyMs: 4,
      },
    ];
    const retryState = {
      messageId: 'retry-1',
      sourceId: 's',
      destinationId: 'd',
      eventType: 'track',
      endpoints: [receiver.url],
      firstAttemptAt: Date.now() - 10_000,
      attempts: 1,
      history,
      dueAt: Date.now(),
    };
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: t.redeliver,
      messages: [{ key: 's:u', value: '{"type":"track"}', headers: retryStateToHeaders(retryState) }],
    });
    await producer.disconnect();
    await sleep(2_500); // the 2 s window of the waiting events passes

    const collected = await watchTopics(kafka, [t.deadLetter, t.attempts]);
    closers.push(() => collected.stop());
    const service: DelivererService = await createDeliverer(ctx, { port: 0 }).start();
    closers.push(() => service.close());

    await waitUntil(async () => collected.records(t.deadLetter).length >= 21, 30_000);
    // A fresh event after the start is delivered: the window is not closed for everyone.
    await produceEvents(kafka, t.events, [ev('fresh-1')]);
    await receiver.waitFor(1, 20_000);
    await sleep(500);

    assert.deepEqual(
      receiver.requests.map((r) => r.headers['x-message-id']),
      ['fresh-1'],
      'no attempt of a lagged event reached the receiver',
    );
    const attempts = collected.records(t.attempts).map((r) => JSON.parse(r.value!.toString()) as AttemptEvent);
    assert.deepEqual(
      attempts.map((a) => a.messageId),
      ['fresh-1'],
      'no attempt recorded for a lagged event',
    );
    const dead = collected.records(t.deadLetter).map((r) => retryStateFromHeaders(r.headers));
    assert.equal(dead.length, 21);
    for (const state of dead) {
      assert.equal(state.deadReason, 'window_exhausted');
      assert.match(state.lastError ?? '', /window of 2000 ms/);
    }
    const fromEvents = dead.filter((s) => s.messageId.startsWith('lagged-'));
    assert.deepEqual(new Set(fromEvents.map((s) => s.messageId)), new Set(lagged.map((e) => e.messageId)));
    for (const s of fromEvents) {
      assert.equal(s.attempts, 0);
      assert.deepEqual(s.history, []);
      assert.ok(s.firstAttemptAt < s.deadAt! - 2_000, 'the window counted from acceptance (the record timestamp)');
    }
    const retry = dead.find((s) => s.messageId === 'retry-1')!;
    assert.equal(retry.attempts, 1, 'no attempt added');
    assert.deepEqual(retry.history, history, 'the attempt history travels into the dead letter');
    assert.equal(retry.firstAttemptAt, retryState.firstAttemptAt);
    assert.equal(
      collected.records(t.deadLetter).every((r) => r.headers[RETRY_HEADERS.deadReason] === 'window_exhausted'),
      true,
    );
  });
});

describe('timed-out requests are logged, rate-limited per endpoint (real receiver)', () => {
  const closers: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const close of closers.reverse()) await close();
  });

  it('30 timeouts to one endpoint within 10 s give one warn line with the redacted URL', async () => {
    const receiver = await startReceiver({ behaviour: () => ({ status: 200, delayMs: 3_000 }) });
    closers.push(() => receiver.close());
    const url = `${receiver.url.replace('http://', 'http://hookuser:hookpass@')}?token=s3cret`;
    const config = setup(url, { delivery: { timeout: '300ms', ssrf: { allowCidrs: ['127.0.0.0/8'] } } });
    const lines: Record<string, unknown>[] = [];
    const destination = new Writable({ write: (chunk, _enc, cb) => (lines.push(JSON.parse(String(chunk))), cb()) });
    const ctx = {
      ...testServiceContext('deliverer', config),
      logger: createLogger({ name: 'deliverer', level: 'warn', destination }),
    };
    const kafka = testKafka({ clientId: 'timeout-test' });
    const service = await createDeliverer(ctx, { port: 0 }).start();
    closers.push(() => service.close());
    const t = config.kafka.topics;
    const collected = await watchTopics(kafka, [t.attempts]);
    closers.push(() => collected.stop());

    await produceEvents(
      kafka,
      t.events,
      Array.from({ length: 30 }, (_, i) => ev(`slow-${i}`)),
    );
    await waitUntil(async () => collected.records(t.attempts).length >= 30, 30_000);
    const attempts = collected.records(t.attempts).map((r) => JSON.parse(r.value!.toString()) as AttemptEvent);
    assert.ok(attempts.every((a) => a.error === 'timeout'));

    const timeouts = lines.filter((l) => l.msg === 'webhook request timed out');
    assert.equal(timeouts.length, 1, `one line for 30 timeouts in well under 10 s, got ${timeouts.length}`);
    const line = timeouts[0]!;
    assert.equal(line.level, 40);
    assert.equal(line.destinationId, 'd');
    assert.equal(line.timeoutMs, 300);
    assert.equal(line.endpoint, `${receiver.url.replace('http://', 'http://***@')}?***`);
    assert.match(String(line.messageId), /^slow-\d+$/);
    assert.ok(!JSON.stringify(lines).includes('s3cret') && !JSON.stringify(lines).includes('hookpass'));
  });
});
