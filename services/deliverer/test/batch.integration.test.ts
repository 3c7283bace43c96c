import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createJsonCodec } from '@sluice/codec';
import type { SluiceConfig } from '@sluice/config';
import { recordKey, retryStateFromHeaders, type AttemptEvent, type EventEnvelope } from '@sluice/envelope';
import {
  receivedEnvelope,
  startReceiver,
  testConfig,
  testKafka,
  testServiceContext,
  watchTopics,
  type ReceivedRequest,
  type Receiver,
  type TopicWatcher,
  waitUntil,
} from '@sluice/testkit';
import { encodeBody, renderBatchBody, renderBody } from '@sluice/webhook';
import { verifySignature } from '@sluice/webhook-signature';
import type { Kafka } from 'kafkajs';
import { Webhook } from 'standardwebhooks';
import { createDeliverer, type DelivererService } from '../src/index.ts';
import { produceEvents } from './kafka-helpers.ts';

// Batched delivery end to end: the real deliverer (webhook thread and all) on a real broker, real
// receivers on 127.0.0.1, one deliverer for every case (one destination per case).

const WHSEC = `whsec_${randomBytes(32).toString('base64')}`;
const HEX = 'batch-hex-secret';
const CASES = ['signed', 'partial', 'failing', 'window'] as const;
type Case = (typeof CASES)[number];

interface BatchDoc {
  batchId: string;
  messageIds: string[];
}
const doc = (req: ReceivedRequest) => JSON.parse(req.body.toString('utf8')) as BatchDoc;
const plainHeaders = (req: ReceivedRequest) =>
  Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
const ev = (c: Case, n: number) =>
  receivedEnvelope({
    sourceId: `s-${c}`,
    messageId: `${c}-${n}`,
    event: 'Batched',
    properties: { n, text: 'ünïcode ✓' },
  });
/** The body the event's own request would carry. */
const singleBody = (e: EventEnvelope) => {
  const rendered = renderBody(e);
  assert.ok(rendered.ok);
  return encodeBody(rendered.body);
};

describe('batched delivery on the real broker', () => {
  const r = {} as Record<Case, Receiver>;
  let config: SluiceConfig;
  let service: DelivererService;
  let kafka: Kafka;
  let seen: TopicWatcher;
  const attempts = (prefix: string) =>
    seen
      .records(config.kafka.topics.attempts)
      .map((x) => JSON.parse(String(x.value)) as AttemptEvent)
      .filter((a) => a.messageId.startsWith(prefix));
  const states = (topic: string, prefix: string) =>
    seen
      .records(topic)
      .map((x) => retryStateFromHeaders(x.headers))
      .filter((s) => s.messageId.startsWith(prefix));

  before(async () => {
    r.signed = await startReceiver({
      behaviour: (req) => {
        try {
          new Webhook(WHSEC).verify(req.body.toString('utf8'), plainHeaders(req));
        } catch {
          return { status: 401 };
        }
        return { status: verifySignature(HEX, req.body, String(req.headers['x-signature'])) ? 200 : 401 };
      },
    });
    // The first batch: partial-1 failed with 503 (retryable), partial-2 with 400 (permanent).
    r.partial = await startReceiver({
      behaviour: (_req, index) =>
        index === 0
          ? {
              status: 200,
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({
                failed: [
                  { messageId: 'partial-1', status: 503 },
                  { messageId: 'partial-2', status: 400, error: 'rejected by schema' },
                ],
              }),
            }
          : { status: 204 },
    });
    r.failing = await startReceiver({ behaviour: () => ({ status: 503 }) });
    r.window = await startReceiver();
    const dest = (c: Case, batch: Record<string, unknown>, settings: Record<string, unknown> = {}) => ({
      id: `d-${c}`,
      type: 'webhooks',
      sourceIds: [`s-${c}`],
      batch,
      settings: { webhooks: [{ url: r[c].url }], ...settings },
    });
    config = testConfig({
      sources: CASES.map((c) => ({ id: `s-${c}`, writeKeys: [`k-${c}`] })),
      destinations: [
        dest(
          'signed',
          { maxEvents: 6, maxWait: '2s' },
          {
            sharedSecret: HEX,
            signing: {
              schemes: ['x-signature', 'standard-webhooks'],
              standardWebhooks: { secrets: [{ secret: WHSEC }] },
            },
          },
        ),
        dest('partial', { maxEvents: 4, maxWait: '2s' }),
        dest('failing', { maxEvents: 3, maxWait: '2s' }),
        dest('window', { maxEvents: 2, maxWait: '50ms' }),
      ],
      delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
    });
    service = await createDeliverer(testServiceContext('deliverer', config), { port: 0 }).start();
    kafka = testKafka({ clientId: 'deliverer-batch-test' });
    const t = config.kafka.topics;
    seen = await watchTopics(kafka, [t.attempts, t.retry, t.deadLetter]);
  });

  after(async () => {
    await service?.close();
    await seen?.stop();
    await Promise.all(Object.values(r).map((x) => x.close()));
  });

  it('one request for six events, signed over the whole body (standardwebhooks, X-Signature), each event as alone; attempt records name the batch', async () => {
    const events = [1, 2, 3, 4, 5, 6].map((n) => ev('signed', n));
    await produceEvents(kafka, config.kafka.topics.events, events);
    const [req] = await r.signed.waitFor(1);
    const got = doc(req!);
    assert.equal(got.messageIds.length, 6, 'the six events in one batch');
    assert.equal(req!.headers['x-batch-size'], '6');
    // Byte for byte: the document is the events' single bodies, in the batch's order.
    const byId = new Map(events.map((e) => [e.messageId, singleBody(e)]));
    const items = got.messageIds.map((messageId) => ({ messageId, body: byId.get(messageId)! }));
    assert.ok(req!.body.equals(renderBatchBody(got.batchId, items)), 'each event exactly as its own request');
    await seen.waitFor(config.kafka.topics.attempts, 6);
    const recorded = attempts('signed-');
    assert.equal(recorded.length, 6, 'one attempt record per event');
    for (const a of recorded) {
      assert.equal(a.outcome, 'success', 'the receiver verified both signatures');
      assert.equal(a.batchId, got.batchId);
      assert.equal(a.batchSize, 6);
    }
  });

  it('per-event results: only the 503 id is retried and batched again when it comes back, only the 400 id dead-lettered', async () => {
    const t = config.kafka.topics;
    await produceEvents(
      kafka,
      t.events,
      [1, 2, 3, 4].map((n) => ev('partial', n)),
    );
    const [retried] = (await seen.waitFor(t.retry, 1)).filter(
      (x) => retryStateFromHeaders(x.headers).messageId === 'partial-1',
    );
    assert.ok(retried, 'partial-1 handed to the retry path');
    assert.equal(states(t.retry, 'partial-').length, 1, 'nothing else retried');
    await seen.waitFor(t.deadLetter, 1);
    const dead = states(t.deadLetter, 'partial-');
    assert.deepEqual(
      dead.map((s) => [s.messageId, s.deadReason]),
      [['partial-2', 'permanent_failure']],
    );
    // The retry service's forward, as it writes it: the same bytes and state onto sluice.redeliver.
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: t.redeliver,
      messages: [{ key: retried.key, value: retried.value, headers: retried.headers }],
    });
    await producer.disconnect();
    await r.partial.waitFor(2);
    const again = doc(r.partial.requests[1]!);
    assert.deepEqual(again.messageIds, ['partial-1'], 'the retried event comes back in a batch of its own');
    const second = () => attempts('partial-1').find((a) => a.attempt === 2);
    await waitUntil(() => second() !== undefined, 10_000, 'second attempt record');
    assert.deepEqual([second()!.outcome, second()!.batchId, second()!.batchSize], ['success', again.batchId, 1]);
  });

  it('a 5xx for the batch retries every event of it', async () => {
    const t = config.kafka.topics;
    await produceEvents(
      kafka,
      t.events,
      [1, 2, 3].map((n) => ev('failing', n)),
    );
    await r.failing.waitFor(1);
    await waitUntil(() => states(t.retry, 'failing-').length === 3, 10_000, 'three retry records');
    assert.equal(r.failing.requests.length, 1, 'one request for the three');
    for (const s of states(t.retry, 'failing-')) {
      assert.equal(s.attempts, 1);
      assert.match(s.lastError ?? '', /http_503/);
    }
  });

  it('an event past its window is dead-lettered, never batched; the fresh one beside it is delivered', async () => {
    const t = config.kafka.topics;
    const old = ev('window', 1);
    const fresh = ev('window', 2);
    const codec = createJsonCodec();
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: t.events,
      messages: [
        // Accepted five hours ago (its record's timestamp): the 4 h window closed before this attempt.
        { key: recordKey(old), value: await codec.encode(old), timestamp: String(Date.now() - 5 * 3_600_000) },
        { key: recordKey(fresh), value: await codec.encode(fresh) },
      ],
    });
    await producer.disconnect();
    const [req] = await r.window.waitFor(1);
    assert.deepEqual(doc(req!).messageIds, ['window-2']);
    await waitUntil(() => states(t.deadLetter, 'window-').length === 1, 10_000, 'the dead letter');
    assert.equal(states(t.deadLetter, 'window-')[0]!.deadReason, 'window_exhausted');
    assert.equal(r.window.requests.length, 1);
  });
});
