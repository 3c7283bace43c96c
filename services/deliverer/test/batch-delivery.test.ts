import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { SluiceConfig } from '@sluice/config';
import { retryStateFromHeaders, type AttemptEvent, type RetryState } from '@sluice/envelope';
import { freePort, startReceiver, testConfig, type ReceivedRequest, type Receiver } from '@sluice/testkit';
import { MAX_BATCH_RESULT_BYTES } from '@sluice/webhook';
import { verifySignature } from '@sluice/webhook-signature';
import { Webhook } from 'standardwebhooks';
import { UndiciWebhookClient } from '../src/transport/webhook-client.ts';
import type { DeliveryJob } from '../src/intake/delivery-job.ts';
import type { PartDecision } from '../src/attempt/part-decision.ts';
import { deliveryRig, LOOPBACK_POLICY, type DeliveryRig } from './delivery-rig.ts';

// Batched delivery through the real Delivery, a real undici client and real receivers on
// 127.0.0.1; only the Kafka side is a recording sink (the broker test is batch.integration.test.ts).

const WHSEC = `whsec_${randomBytes(32).toString('base64')}`;
const HEX = 'batch-hex-secret';

interface Rig extends DeliveryRig {
  config: SluiceConfig;
}

function rig(url: string, batch: Record<string, unknown>, delivery: Record<string, unknown> = {}): Rig {
  const config = testConfig({
    sources: [{ id: 's', writeKeys: ['k'] }],
    destinations: [
      {
        id: 'd',
        type: 'webhooks',
        sourceIds: ['s'],
        batch,
        settings: {
          webhooks: [{ url }],
          sharedSecret: HEX,
          signing: {
            schemes: ['x-signature', 'standard-webhooks'],
            standardWebhooks: { secrets: [{ secret: WHSEC }] },
          },
        },
      },
    ],
    delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] }, ...delivery },
  });
  return { config, ...deliveryRig(config, { connections: 4 }) };
}

const job = (config: SluiceConfig, n: number, text = 'ünïcode ✓'): DeliveryJob => ({
  key: `s:u${n}`,
  body: Buffer.from(JSON.stringify({ type: 'track', event: 'Batched', properties: { n, text } })),
  messageId: `m-${n}`,
  sourceId: 's',
  destinationId: 'd',
  eventType: 'track',
  endpoints: config.destinations[0]!.endpoints.map((e) => e.ref),
});

const records = (r: Rig, topic: keyof SluiceConfig['kafka']['topics']) =>
  r.sent.filter((s) => s.topic === r.config.kafka.topics[topic]);
const attempts = (r: Rig) => records(r, 'attempts').map((s) => JSON.parse(String(s.message.value)) as AttemptEvent);
const states = (r: Rig, topic: 'retry' | 'deadLetter'): RetryState[] =>
  records(r, topic).map((s) => retryStateFromHeaders(s.message.headers as never));

const plainHeaders = (req: ReceivedRequest) =>
  Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));

/** Runs `n` jobs at once through one rig and returns their decisions. */
const runAll = (r: Rig, n: number): Promise<PartDecision[]> =>
  Promise.all(Array.from({ length: n }, (_, i) => r.delivery.run(job(r.config, i + 1), r.config.destinations[0]!)));

describe('batched delivery (real Delivery, undici and receivers on 127.0.0.1)', () => {
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
  });
  after(() => receiver.close());

  it('one request for the batch: each event byte for byte as alone, signatures over the whole body verified', async () => {
    receiver.behave(() => ({ status: 200 }));
    const r = rig(receiver.url, { maxEvents: 4, maxWait: '5s' });
    const before = receiver.requests.length;
    const decisions = await runAll(r, 4);
    await r.close();
    assert.deepEqual(
      decisions.map((d) => d.kind),
      ['delivered', 'delivered', 'delivered', 'delivered'],
    );
    const got = receiver.requests.slice(before);
    assert.equal(got.length, 1, 'one request for four events');
    const req = got[0]!;
    const doc = JSON.parse(req.body.toString('utf8')) as { batchId: string; messageIds: string[]; events: unknown[] };
    assert.deepEqual(doc.messageIds, ['m-1', 'm-2', 'm-3', 'm-4']);
    // events[i] is byte for byte the single request's body: the document is exactly the bodies joined.
    const bodies = [1, 2, 3, 4].map((n) => job(r.config, n).body.toString('utf8'));
    const expected = `{"batchId":"${doc.batchId}","messageIds":${JSON.stringify(doc.messageIds)},"events":[${bodies.join(',')}]}`;
    assert.ok(req.body.equals(Buffer.from(expected)), 'the body is the single bodies, unchanged');
    assert.equal(req.headers['x-batch-id'], doc.batchId);
    assert.equal(req.headers['x-batch-size'], '4');
    assert.equal(req.headers['x-message-id'], undefined);
    assert.equal(req.headers['webhook-id'], doc.batchId);
    new Webhook(WHSEC).verify(req.body.toString('utf8'), plainHeaders(req));
    assert.ok(verifySignature(HEX, req.body, String(req.headers['x-signature'])), 'X-Signature over the whole body');
    const recorded = attempts(r);
    assert.equal(recorded.length, 4, 'one attempt record per event');
    for (const a of recorded) {
      assert.equal(a.outcome, 'success');
      assert.equal(a.batchId, doc.batchId);
      assert.equal(a.batchSize, 4);
    }
    assert.deepEqual(recorded.map((a) => a.messageId).sort(), doc.messageIds);
  });

  it('per-event results: 503 ids retried, 400 ids dead-lettered, the rest delivered', async () => {
    const failed = [
      { messageId: 'm-1', status: 503 },
      { messageId: 'm-2', status: 400, error: 'schema mismatch' },
      { messageId: 'm-3' },
    ];
    receiver.behave(() => ({
      status: 207,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ failed }),
    }));
    const r = rig(receiver.url, { maxEvents: 5, maxWait: '5s' });
    const decisions = await runAll(r, 5);
    await r.close();
    assert.deepEqual(
      decisions.map((d) => d.kind),
      ['retry', 'dead', 'retry', 'delivered', 'delivered'],
    );
    assert.deepEqual(
      states(r, 'retry').map((s) => [s.messageId, s.attempts, s.lastError]),
      [
        ['m-1', 1, `${r.config.destinations[0]!.endpoints[0]!.ref}: http_503`],
        ['m-3', 1, `${r.config.destinations[0]!.endpoints[0]!.ref}: batch_item_failed`],
      ],
    );
    const [dead] = states(r, 'deadLetter');
    assert.equal(dead?.messageId, 'm-2');
    assert.equal(dead?.deadReason, 'permanent_failure');
    assert.equal(states(r, 'deadLetter').length, 1);
    const m2 = attempts(r).find((a) => a.messageId === 'm-2')!;
    assert.deepEqual(
      [m2.outcome, m2.status, m2.responseSnippet, m2.batchSize],
      ['permanent', 400, 'schema mismatch', 5],
    );
  });

  it('a malformed result, and a 5xx for the batch, retry every event of it; a 400 for the batch dead-letters them all', async () => {
    for (const [reply, kind, error] of [
      [
        { status: 200, headers: { 'content-type': 'application/json' }, body: '{"failed":{}}' },
        'retry',
        /batch_result_malformed/,
      ],
      [{ status: 502 }, 'retry', /http_502/],
      [{ status: 400 }, 'dead', /http_400/],
    ] as const) {
      receiver.behave(() => reply);
      const r = rig(receiver.url, { maxEvents: 3, maxWait: '5s' });
      const decisions = await runAll(r, 3);
      await r.close();
      assert.deepEqual(
        decisions.map((d) => d.kind),
        [kind, kind, kind],
      );
      const written = states(r, kind === 'retry' ? 'retry' : 'deadLetter');
      assert.equal(written.length, 3);
      for (const s of written) assert.match(s.lastError ?? '', error);
      assert.equal(new Set(attempts(r).map((a) => a.batchId)).size, 1, 'all three records name the one batch');
    }
  });

  it("a 503 with Retry-After for the batch: every event waits that long, and the endpoint's next batch is held", async () => {
    receiver.behave(() => ({ status: 503, headers: { 'retry-after': '7' } }));
    const r = rig(receiver.url, { maxEvents: 2, maxWait: '5s' });
    const before = receiver.requests.length;
    const first = await runAll(r, 2);
    const [held] = await Promise.all([
      r.delivery.run(job(r.config, 3), r.config.destinations[0]!),
      r.delivery.run(job(r.config, 4), r.config.destinations[0]!),
    ]);
    await r.close();
    assert.deepEqual(
      first.map((d) => d.kind),
      ['retry', 'retry'],
    );
    assert.equal(held?.kind, 'defer', 'no request while the Retry-After holds');
    assert.equal(receiver.requests.length - before, 1, 'one request in all');
    const waits = states(r, 'retry').map((s) => s.retryAfterMs);
    assert.deepEqual(waits.slice(0, 2), [7_000, 7_000]);
    for (const w of waits.slice(2))
      assert.ok(w !== undefined && w > 6_000 && w <= 7_000, `held until the hold ends: ${w}`);
  });

  it('maxWait sends a batch that never fills; an event over maxBytes goes alone', async () => {
    receiver.behave(() => ({ status: 204 }));
    const r = rig(receiver.url, { maxEvents: 100, maxBytes: 1024, maxWait: '30ms' });
    const before = receiver.requests.length;
    const started = Date.now();
    const big = { ...job(r.config, 9), body: Buffer.from(JSON.stringify({ type: 'track', pad: 'x'.repeat(2_000) })) };
    // The big one first: had a batch been open, it would have sent that batch at once (it would pass maxBytes).
    const decisions = await Promise.all([
      r.delivery.run(big, r.config.destinations[0]!),
      r.delivery.run(job(r.config, 1), r.config.destinations[0]!),
      r.delivery.run(job(r.config, 2), r.config.destinations[0]!),
    ]);
    const waited = Date.now() - started;
    await r.close();
    assert.deepEqual(
      decisions.map((d) => d.kind),
      ['delivered', 'delivered', 'delivered'],
    );
    const sizes = receiver.requests.slice(before).map((q) => q.headers['x-batch-size']);
    assert.deepEqual(sizes.sort(), ['1', '2'], 'the big event alone (at once), the two others after maxWait');
    assert.ok(waited >= 30, `the open batch waited maxWait (${waited} ms)`);
  });

  it("failing batches open the endpoint's circuit breaker: the next batch is deferred without a request", async () => {
    const closed = `http://127.0.0.1:${await freePort()}/hook`;
    const r = rig(closed, { maxEvents: 2, maxWait: '5s' }, { circuitBreaker: { failures: 2, cooldown: '1m' } });
    const first = await runAll(r, 4); // two batches, both refused
    const [third] = await Promise.all([
      r.delivery.run(job(r.config, 5), r.config.destinations[0]!),
      r.delivery.run(job(r.config, 6), r.config.destinations[0]!),
    ]);
    await r.close();
    assert.deepEqual(
      first.map((d) => d.kind),
      ['retry', 'retry', 'retry', 'retry'],
    );
    assert.equal(third?.kind, 'defer');
    const outcomes = attempts(r).map((a) => [a.messageId, a.outcome, a.batchSize]);
    assert.deepEqual(
      outcomes.filter(([id]) => id === 'm-5' || id === 'm-6'),
      [
        ['m-5', 'circuit_open', undefined],
        ['m-6', 'circuit_open', undefined],
      ],
    );
    assert.equal(attempts(r).filter((a) => a.outcome === 'retryable').length, 4, 'two batch requests, four records');
  });

  it('two endpoints: an event one of them took is delivered even if the other named it failed', async () => {
    const other = await startReceiver({
      behaviour: () => ({
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          failed: [
            { messageId: 'm-1', status: 400 },
            { messageId: 'm-2', status: 503 },
          ],
        }),
      }),
    });
    receiver.behave(() => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ failed: [{ messageId: 'm-2', status: 400 }] }),
    }));
    const r = rig(receiver.url, { maxEvents: 3, maxWait: '5s' });
    const destination = r.config.destinations[0]!;
    const second = { ...destination.endpoints[0]!, url: other.url, ref: other.url };
    const both = { ...destination, endpoints: [destination.endpoints[0]!, second] };
    const jobs = [1, 2, 3].map((n) => ({ ...job(r.config, n), endpoints: both.endpoints.map((e) => e.ref) }));
    const decisions = await Promise.all(jobs.map((j) => r.delivery.run(j, both)));
    await r.close();
    await other.close();
    // m-1: taken by the first; m-2: 400 there, 503 at the other → retried to the other only; m-3: taken by both.
    assert.deepEqual(
      decisions.map((d) => d.kind),
      ['delivered', 'retry', 'delivered'],
    );
    assert.deepEqual(
      states(r, 'retry').map((s) => [s.messageId, s.endpoints]),
      [['m-2', [other.url]]],
    );
    assert.equal(attempts(r).length, 6, 'one record per event per endpoint');
    assert.equal(new Set(attempts(r).map((a) => a.batchId)).size, 1, 'both requests carry the one batch');
  });

  it('the client reads a batch answer up to MAX_BATCH_RESULT_BYTES and says when it was cut', async () => {
    const client = new UndiciWebhookClient({ settings: () => ({ connections: 1 }), policy: () => LOOPBACK_POLICY });
    const send = (body: string) => {
      receiver.behave(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body }));
      return client.send({
        url: receiver.url,
        headers: {},
        body: Buffer.from('{}'),
        timeoutMs: 5_000,
        readAnswer: true,
      });
    };
    const small = await send('{"failed":[]}');
    assert.equal(Buffer.from(small.answer!.body!).toString(), '{"failed":[]}');
    assert.equal(small.answer!.contentType, 'application/json');
    assert.equal(small.answer!.truncated, false);
    const whole = await send('x'.repeat(MAX_BATCH_RESULT_BYTES));
    assert.equal(whole.answer!.body!.length, MAX_BATCH_RESULT_BYTES);
    assert.equal(whole.answer!.truncated, false);
    const cut = await send('x'.repeat(MAX_BATCH_RESULT_BYTES + 1));
    assert.equal(cut.answer!.truncated, true);
    receiver.behave(() => ({ status: 200, body: 'single' }));
    const single = await client.send({ url: receiver.url, headers: {}, body: Buffer.from('{}'), timeoutMs: 5_000 });
    assert.equal(single.answer, undefined, 'a single request gets its snippet only');
    assert.equal(single.responseSnippet, 'single');
    await client.close();
  });
});
