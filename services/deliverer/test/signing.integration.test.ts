import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { parseConfig, type SluiceConfig } from '@sluice/config';
import {
  startReceiver,
  testConfig,
  testServiceContext,
  waitUntil,
  type ReceivedRequest,
  type Receiver,
} from '@sluice/testkit';
import { fileKafka, receivedEnvelope, testKafka, watchTopics } from '@sluice/testkit';
import { verifySignature } from '@sluice/webhook-signature';
import type { Kafka } from 'kafkajs';
import { Webhook } from 'standardwebhooks';
import { createDeliverer, type DelivererService } from '../src/index.ts';
import { produceEvents } from './kafka-helpers.ts';

// Standard Webhooks signatures checked by an independent implementation: the `standardwebhooks`
// package (the specification's reference library for JavaScript), inside real receivers that
// answer 401 to a request it does not verify, against the real deliverer and Kafka.

const whsec = () => `whsec_${randomBytes(32).toString('base64')}`;
const HEX_SECRET = 'x-signature-secret';
const [BOTH, OLD, NEW, RETRY, RELOADED] = [whsec(), whsec(), whsec(), whsec(), whsec()];
/** The old secret's notAfter, a few seconds after start: the rotation test waits past it. */
const ROTATION_GRACE_MS = 6_000;

const ev = (sourceId: string, messageId: string) =>
  receivedEnvelope({ sourceId, messageId, event: 'Signed', properties: { n: 1, text: 'ünïcode ✓' } });

const plainHeaders = (req: ReceivedRequest) =>
  Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));

/** Whether the reference library accepts the request with this secret (tolerance: its default 5 min). */
function libraryVerifies(secret: string, req: ReceivedRequest): boolean {
  try {
    new Webhook(secret).verify(req.body.toString('utf8'), plainHeaders(req));
    return true;
  } catch {
    return false;
  }
}

/** A receiver that answers 204 only when one of `secrets()` verifies the request, else 401. */
const verifyingReceiver = (secrets: () => string[], status = (_index: number) => 204) =>
  startReceiver({
    behaviour: (req, index) => ({ status: secrets().some((s) => libraryVerifies(s, req)) ? status(index) : 401 }),
  });

describe('deliverer signing, checked by the standardwebhooks package', () => {
  const r = {} as Record<'both' | 'rotation' | 'retry' | 'reload', Receiver>;
  let raw: Record<string, unknown>;
  let config: SluiceConfig;
  let ctx: ReturnType<typeof testServiceContext>;
  let service: DelivererService;
  let kafka: Kafka;
  let collected: Awaited<ReturnType<typeof watchTopics>>;
  let oldNotAfter: number;
  let rotationSettings: (notAfter: number) => Record<string, unknown>;

  before(async () => {
    r.both = await verifyingReceiver(() => [BOTH]);
    r.rotation = await verifyingReceiver(() => [NEW]);
    r.retry = await verifyingReceiver(
      () => [RETRY],
      (index) => (index === 0 ? 503 : 204),
    );
    r.reload = await verifyingReceiver(() => [RELOADED]);
    oldNotAfter = Date.now() + ROTATION_GRACE_MS;
    const sw = (secrets: { secret: string; notBefore?: string; notAfter?: string }[], sharedSecret?: string) => ({
      ...(sharedSecret !== undefined && { sharedSecret }),
      signing: {
        schemes: sharedSecret !== undefined ? ['x-signature', 'standard-webhooks'] : ['standard-webhooks'],
        standardWebhooks: { secrets },
      },
    });
    rotationSettings = (notAfter: number) =>
      sw([
        { secret: OLD, notAfter: new Date(notAfter).toISOString() },
        { secret: NEW, notBefore: new Date(Date.now() - 3_600_000).toISOString() },
      ]);
    const dest = (id: string, receiver: Receiver, settings: Record<string, unknown>) => ({
      id: `d-${id}`,
      type: 'webhooks',
      sourceIds: [`s-${id}`],
      settings: { webhooks: [{ url: receiver.url }], ...settings },
    });
    raw = {
      sources: ['both', 'rotation', 'retry', 'reload'].map((id) => ({ id: `s-${id}`, writeKeys: [`k-${id}`] })),
      destinations: [
        dest('both', r.both, sw([{ secret: BOTH }], HEX_SECRET)),
        dest('rotation', r.rotation, rotationSettings(oldNotAfter)),
        dest('retry', r.retry, sw([{ secret: RETRY }])),
        dest('reload', r.reload, sw([{ secret: BOTH }])),
      ],
      delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
    };
    config = testConfig(raw);
    ctx = testServiceContext('deliverer', config);
    service = await createDeliverer(ctx, { port: 0 }).start();
    kafka = testKafka({ clientId: 'deliverer-signing-test' });
    collected = await watchTopics(kafka, [config.kafka.topics.retry]);
  });

  after(async () => {
    await service?.close();
    await collected?.stop();
    await Promise.all(Object.values(r).map((x) => x.close()));
  });

  const topics = () => config.kafka.topics;

  it('both schemes: X-Signature as before, and Standard Webhooks headers the library verifies', async () => {
    await produceEvents(kafka, topics().events, [ev('s-both', 'both-1')]);
    const [got] = await r.both.waitFor(1);
    assert.ok(libraryVerifies(BOTH, got!), 'standardwebhooks verifies the request as received');
    assert.ok(verifySignature(HEX_SECRET, got!.body, String(got!.headers['x-signature'])), 'X-Signature recomputes');
    assert.equal(got!.headers['webhook-id'], 'both-1');
    assert.equal(got!.headers['webhook-id'], got!.headers['x-message-id']);
    const sentAt = Number(got!.headers['webhook-timestamp']);
    assert.ok(Math.abs(sentAt - got!.at / 1_000) < 60, 'timestamp is the send time in seconds');
    assert.ok(!libraryVerifies(whsec(), got!), 'another secret does not verify');
    const tampered = { ...got!, body: Buffer.concat([got!.body, Buffer.from(' ')]) };
    assert.ok(!libraryVerifies(BOTH, tampered), 'a changed body does not verify');
  });

  it('rotation: old and new secret both verify during the overlap, only the new one after notAfter', async () => {
    // The overlap starts now (a reload), not when the deliverer started: its start-up time on a busy
    // machine must not eat the overlap.
    oldNotAfter = Date.now() + ROTATION_GRACE_MS;
    const destinations = (raw.destinations as { id: string; settings: Record<string, unknown> }[]).map((d) =>
      d.id === 'd-rotation' ? { ...d, settings: { ...d.settings, ...rotationSettings(oldNotAfter) } } : d,
    );
    ctx.config.set(parseConfig({ ...raw, destinations, kafka: fileKafka(config) }));
    await produceEvents(kafka, topics().events, [ev('s-rotation', 'rot-overlap')]);
    const [overlap] = await r.rotation.waitFor(1);
    const sentAt = Number(overlap!.headers['webhook-timestamp']) * 1_000;
    assert.ok(sentAt < oldNotAfter, 'sent before the old secret expired');
    assert.equal(String(overlap!.headers['webhook-signature']).split(' ').length, 2);
    assert.ok(libraryVerifies(OLD, overlap!), 'old secret verifies during the overlap');
    assert.ok(libraryVerifies(NEW, overlap!), 'new secret verifies during the overlap');
    assert.equal(overlap!.headers['x-signature'], undefined, 'Standard Webhooks alone: no X-Signature');

    await waitUntil(() => Date.now() >= oldNotAfter + 1_000, ROTATION_GRACE_MS + 5_000, 'the old secret expired');
    await produceEvents(kafka, topics().events, [ev('s-rotation', 'rot-after')]);
    const after = (await r.rotation.waitFor(2))[1]!;
    assert.equal(after.headers['webhook-id'], 'rot-after');
    assert.equal(String(after.headers['webhook-signature']).split(' ').length, 1);
    assert.ok(libraryVerifies(NEW, after), 'new secret verifies after notAfter');
    assert.ok(!libraryVerifies(OLD, after), 'old secret no longer verifies after notAfter');
  });

  it('a retry is signed again with a fresh timestamp over the same body bytes and the same webhook-id', async () => {
    await produceEvents(kafka, topics().events, [ev('s-retry', 'retry-1')]);
    const [first] = await r.retry.waitFor(1);
    await waitUntil(() => collected.records(topics().retry).length > 0, 10_000, 'retry record after the 503');
    const record = collected.records(topics().retry)[0]!;
    // The retry service hands the record back on the redeliver topic when it is due; here it is
    // due a whole second later, so the new webhook-timestamp must differ.
    const nextSecond = (Number(first!.headers['webhook-timestamp']) + 1) * 1_000 + 100;
    await waitUntil(() => Date.now() >= nextSecond, 5_000, 'next second');
    const producer = kafka.producer();
    await producer.connect();
    const due = { key: record.key, value: record.value, headers: record.headers };
    await producer.send({ topic: topics().redeliver, messages: [due] });
    await producer.disconnect();
    const second = (await r.retry.waitFor(2))[1]!;
    assert.ok(second.body.equals(first!.body), 'the same body bytes');
    assert.equal(second.headers['webhook-id'], 'retry-1');
    const [t1, t2] = [Number(first!.headers['webhook-timestamp']), Number(second.headers['webhook-timestamp'])];
    assert.ok(t2 > t1, 'a fresh timestamp');
    assert.notEqual(second.headers['webhook-signature'], first!.headers['webhook-signature']);
    assert.ok(libraryVerifies(RETRY, second), 'the retry verifies');
  });

  it('a config reload replaces the secrets for deliveries that start after it', async () => {
    await produceEvents(kafka, topics().events, [ev('s-reload', 'reload-before')]);
    const [beforeReload] = await r.reload.waitFor(1);
    assert.ok(libraryVerifies(BOTH, beforeReload!) && !libraryVerifies(RELOADED, beforeReload!));
    const signing = { schemes: ['standard-webhooks'], standardWebhooks: { secrets: [{ secret: RELOADED }] } };
    const destinations = (raw.destinations as { id: string; settings: Record<string, unknown> }[]).map((d) =>
      d.id === 'd-reload' ? { ...d, settings: { ...d.settings, signing } } : d,
    );
    ctx.config.set(parseConfig({ ...raw, destinations, kafka: fileKafka(config) }));
    await produceEvents(kafka, topics().events, [ev('s-reload', 'reload-after')]);
    const afterReload = (await r.reload.waitFor(2))[1]!;
    assert.equal(afterReload.headers['webhook-id'], 'reload-after');
    assert.ok(libraryVerifies(RELOADED, afterReload) && !libraryVerifies(BOTH, afterReload));
  });
});
