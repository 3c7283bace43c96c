import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { createLogger } from '@sluice/logging';
import { type Receiver, sleep, startReceiver, testConfig, waitUntil } from '@sluice/testkit';
import { Webhook } from 'standardwebhooks';
import type { RecordSink } from '@sluice/kafka';
import { Registry } from 'prom-client';
import type { AttemptEvent } from '@sluice/envelope';
import { OPERATOR_EVENTS_DESTINATION_ID, type SluiceConfig } from '@sluice/config';
import { actionRecord } from '@sluice/destination-state';
import { OperatorOutbox, OPERATOR_SOURCE_ID } from '../src/attempt/health/operator-outbox.ts';
import type { AttemptResult } from '../src/transport/attempt-result.ts';
import { UndiciWebhookClient } from '../src/transport/webhook-client.ts';
import { DelivererMetrics } from '../src/service/metrics.ts';
import { DestinationHealth } from '../src/attempt/health/destination-health.ts';
import { OPERATOR_QUEUE_MAX } from '../src/service/constants.ts';
import { AutoDisableTracker } from '../src/attempt/health/auto-disable.ts';
import { DeadLetterBursts, expiringKeys, RefusalStreaks } from '../src/attempt/health/operator-signals.ts';
import { deliveryRig, LOOPBACK_POLICY } from './delivery-rig.ts';

const HOUR = 3_600_000;
const WHSEC = `whsec_${randomBytes(32).toString('base64')}`;
const logger = createLogger({ name: 'operator-events-test', level: 'silent' });

describe('auto-disable tracker', () => {
  it('disables an endpoint only once no attempt got a 2xx for the whole time, then counts anew', () => {
    const t = new AutoDisableTracker();
    assert.equal(t.observe({ destinationId: 'd', endpoint: 'e', at: 0, error: 'http_503' }, 1_000), undefined);
    assert.equal(t.observe({ destinationId: 'd', endpoint: 'e', at: 999, error: 'timeout' }, 1_000), undefined);
    assert.deepEqual(t.observe({ destinationId: 'd', endpoint: 'e', at: 1_000, error: 'http_500' }, 1_000), {
      destinationId: 'd',
      endpoint: 'e',
      failingSince: 0,
      lastError: 'http_500',
    });
    // A new count starts with the next failure.
    assert.equal(t.observe({ destinationId: 'd', endpoint: 'e', at: 1_500, error: 'http_503' }, 1_000), undefined);
    assert.equal(t.observe({ destinationId: 'd', endpoint: 'e', at: 2_499, error: 'http_503' }, 1_000), undefined);
    assert.ok(t.observe({ destinationId: 'd', endpoint: 'e', at: 2_500, error: 'http_503' }, 1_000));
  });

  it('a 2xx resets the count; endpoints and destinations count apart; 0 is off', () => {
    const t = new AutoDisableTracker();
    t.observe({ destinationId: 'd', endpoint: 'e', at: 0, error: 'x' }, 1_000);
    t.observe({ destinationId: 'd', endpoint: 'e', at: 500 }, 1_000);
    assert.equal(t.observe({ destinationId: 'd', endpoint: 'e', at: 1_200, error: 'x' }, 1_000), undefined);
    assert.equal(t.observe({ destinationId: 'd', endpoint: 'other', at: 0, error: 'x' }, 1_000), undefined);
    assert.equal(t.observe({ destinationId: 'd2', endpoint: 'e', at: 0, error: 'x' }, 1_000), undefined);
    assert.equal(t.observe({ destinationId: 'd', endpoint: 'e', at: 10_000, error: 'x' }, 0), undefined);
    t.retain((k) => k.destinationId !== 'd');
    assert.equal(
      t.observe({ destinationId: 'd', endpoint: 'e', at: 20_000, error: 'x' }, 1_000),
      undefined,
      'forgotten: a new count',
    );
  });
});

describe('operator signals', () => {
  it('a dead-letter burst is told once per minute and destination, when the count passes the limit', () => {
    const b = new DeadLetterBursts();
    for (let i = 0; i < 3; i++) assert.equal(b.add('d', 1_000 + i, 3), undefined);
    assert.equal(b.add('d', 2_000, 3), 4);
    assert.equal(b.add('d', 3_000, 3), undefined, 'once in the minute');
    assert.equal(b.add('other', 3_000, 3), undefined);
    for (let i = 0; i < 3; i++) b.add('d', 61_000 + i, 3);
    assert.equal(b.add('d', 61_100, 3), 4, 'a new minute');
  });

  it('a filter refusing every event is told when the streak reaches the limit; one let through resets it', () => {
    const s = new RefusalStreaks();
    const refused = { destinationId: 'd', refused: true };
    const passed = { destinationId: 'd', refused: false };
    assert.equal(s.verdict(refused, 2), false);
    assert.equal(s.verdict(passed, 2), false);
    assert.equal(s.verdict(refused, 2), false);
    assert.equal(s.verdict(refused, 2), true);
    assert.equal(s.verdict(refused, 2), false, 'told once per streak');
  });

  it('finds the signing secrets whose notAfter is within the notice, not those passed or further', () => {
    const now = Date.UTC(2026, 0, 1);
    const at = (ms: number) => new Date(now + ms).toISOString();
    const config = testConfig({
      destinations: [
        {
          id: 'd',
          type: 'webhooks',
          settings: {
            webhooks: [{ url: 'https://example.com/h' }],
            signing: {
              schemes: ['x-signature', 'standard-webhooks'],
              xSignature: {
                secrets: [
                  { secret: 'a', notAfter: at(HOUR) },
                  { secret: 'b', notAfter: at(48 * HOUR) },
                ],
              },
              standardWebhooks: {
                secrets: [
                  { secret: WHSEC, notAfter: at(-HOUR) },
                  { secret: WHSEC, notAfter: at(23 * HOUR) },
                ],
              },
            },
          },
        },
      ],
    });
    assert.deepEqual(
      expiringKeys(config, now, 24 * HOUR).map((e) => [e.scheme, e.index, e.notAfter]),
      [
        ['x-signature', 0, at(HOUR)],
        ['standard-webhooks', 1, at(23 * HOUR)],
      ],
    );
  });
});

/** The deliverer's webhook client as the tests' receivers need it: loopback allowed, every other private range refused. */
const client = new UndiciWebhookClient({ settings: () => ({ connections: 2 }), policy: () => LOOPBACK_POLICY });
after(() => client.close());

const operatorConfig = (url: string): SluiceConfig => testConfig({ operatorEvents: { url, secret: WHSEC } });

/** An outbox to `url` over the shared client; what it counts and the attempt records it writes. */
const outbox = (url: string, backoffMs: readonly number[] = [10, 10]) => {
  const config = operatorConfig(url);
  const counts: string[] = [];
  const attempts: AttemptEvent[] = [];
  const sink: RecordSink = {
    send: async (topic, m) => {
      assert.equal(topic, config.kafka.topics.attempts);
      attempts.push(JSON.parse(String(m.value)));
    },
  };
  const s = new OperatorOutbox({
    config: () => config,
    client,
    sink,
    logger,
    now: Date.now,
    counted: (type, outcome) => counts.push(`${type}:${outcome}`),
    backoffMs,
  });
  return { s, counts, attempts };
};

describe('operator outbox', () => {
  const receivers: Receiver[] = [];
  after(async () => {
    for (const r of receivers) await r.close();
  });
  const receiver = async (status: (n: number) => number) => {
    const r = await startReceiver({ behaviour: (_req, i) => ({ status: status(i) }) });
    receivers.push(r);
    return r;
  };

  it('POSTs each event signed (verified with the standardwebhooks library), in order, retrying failures', async () => {
    // The first request fails: the event is sent again.
    const r = await receiver((i) => (i === 0 ? 503 : 204));
    const { s, counts } = outbox(r.url);
    s.send({ type: 'destination.filter_refuses_all', destinationId: 'd', refused: 5 });
    s.send(
      { type: 'destination.dead_letter_burst', destinationId: 'd', deadLetters: 9, windowSeconds: 60 },
      '2026-01-01T00:00:00.000Z',
    );
    await waitUntil(() => counts.length === 2, 10_000, 'both sent');
    assert.deepEqual(counts, ['destination.filter_refuses_all:sent', 'destination.dead_letter_burst:sent']);
    assert.equal(r.requests.length, 3);
    const bodies = r.requests.map((req) =>
      new Webhook(WHSEC).verify(req.body.toString('utf8'), {
        'webhook-id': String(req.headers['webhook-id']),
        'webhook-timestamp': String(req.headers['webhook-timestamp']),
        'webhook-signature': String(req.headers['webhook-signature']),
      }),
    ) as Record<string, unknown>[];
    assert.deepEqual(
      bodies.map((b) => b.type),
      ['destination.filter_refuses_all', 'destination.filter_refuses_all', 'destination.dead_letter_burst'],
    );
    assert.equal(r.requests[0]!.headers['webhook-id'], r.requests[1]!.headers['webhook-id'], 'a retry keeps its id');
    assert.deepEqual(bodies[2], {
      type: 'destination.dead_letter_burst',
      at: '2026-01-01T00:00:00.000Z',
      destinationId: 'd',
      deadLetters: 9,
      windowSeconds: 60,
    });
    await s.close();
  });

  it('gives up after its retries (failed), and drops the oldest when its queue is full, never blocking the caller', async () => {
    const r = await receiver(() => 500);
    const { s, counts } = outbox(r.url);
    const started = performance.now();
    for (let i = 0; i <= OPERATOR_QUEUE_MAX + 1; i++)
      s.send({ type: 'destination.filter_refuses_all', destinationId: `d${i}`, refused: 1 });
    assert.ok(performance.now() - started < 500, 'send only queues');
    assert.equal(
      counts.filter((c) => c.endsWith(':dropped')).length,
      1,
      'one over the bound: the oldest waiting dropped',
    );
    await waitUntil(() => counts.some((c) => c.endsWith(':failed')), 10_000, 'the first given up');
    await s.close();
    assert.equal(counts.length, OPERATOR_QUEUE_MAX + 2, 'every event counted once: failed or dropped');
  });

  it("goes as a destination's webhook: refused by the SSRF policy, retried after a 503, each try recorded", async () => {
    const refusedUrl = 'http://169.254.169.254/latest/hook';
    // Each sender's first request gets a 503, its next a 200.
    let answers = [503];
    const flaky = await receiver(() => answers.shift() ?? 200);
    const event = { type: 'destination.filter_refuses_all', destinationId: 'shop', refused: 7 } as const;

    // What a destination's webhook to the same two URLs gets through the same kind of client.
    const destinationConfig = testConfig({
      sources: [{ id: 's', writeKeys: ['k'] }],
      destinations: [
        { id: 'refused', type: 'webhooks', sourceIds: ['s'], settings: { webhooks: [{ url: refusedUrl }] } },
        { id: 'flaky', type: 'webhooks', sourceIds: ['s'], settings: { webhooks: [{ url: flaky.url }] } },
      ],
      delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
    });
    const rig = deliveryRig(destinationConfig, { connections: 2 });
    const decisions = [];
    for (const d of destinationConfig.destinations)
      decisions.push(
        await rig.delivery.run(
          {
            key: 'u',
            body: Buffer.from('{}'),
            messageId: `m-${d.id}`,
            sourceId: 's',
            destinationId: d.id,
            eventType: 'track',
            endpoints: d.endpoints.map((e) => e.ref),
          },
          d,
        ),
      );
    await rig.close();
    assert.deepEqual(
      decisions.map((d) => d.kind),
      ['dead', 'retry'],
      'refused: never retried; a 503: retried',
    );
    const destinationAttempts = rig.sent
      .filter((x) => x.topic === destinationConfig.kafka.topics.attempts)
      .map((x) => JSON.parse(String(x.message.value)) as AttemptEvent);
    const shape = (a: AttemptEvent) => ({
      endpoint: a.endpoint,
      attempt: a.attempt,
      outcome: a.outcome,
      status: a.status,
      error: a.error,
    });

    // The SSRF policy refuses the operator URL: one try, no request, recorded, not tried again.
    const refused = outbox(refusedUrl);
    refused.s.send(event);
    await waitUntil(() => refused.counts.length === 1, 10_000, 'the refused event ended');
    assert.deepEqual(refused.counts, ['destination.filter_refuses_all:failed']);
    assert.deepEqual(refused.attempts.map(shape), [shape(destinationAttempts[0]!)]);
    assert.deepEqual(shape(refused.attempts[0]!), {
      endpoint: refusedUrl,
      attempt: 1,
      outcome: 'permanent',
      status: undefined,
      error: 'ssrf_blocked',
    });
    await refused.s.close();

    // The 503 is tried again after the backoff; the 200 ends it. Both tries recorded.
    answers = [503];
    const retried = outbox(flaky.url);
    const before = flaky.requests.length;
    retried.s.send(event);
    await waitUntil(() => retried.counts.length === 1, 10_000, 'the retried event ended');
    assert.deepEqual(retried.counts, ['destination.filter_refuses_all:sent']);
    assert.equal(flaky.requests.length - before, 2);
    const [first, second] = retried.attempts;
    assert.deepEqual(shape(first!), shape(destinationAttempts[1]!), "the 503 recorded as the destination's");
    assert.deepEqual(shape(first!), {
      endpoint: flaky.url,
      attempt: 1,
      outcome: 'retryable',
      status: 503,
      error: 'http_503',
    });
    assert.deepEqual(shape(second!), {
      endpoint: flaky.url,
      attempt: 2,
      outcome: 'success',
      status: 200,
      error: undefined,
    });
    for (const a of retried.attempts) {
      assert.equal(a.sourceId, OPERATOR_SOURCE_ID);
      assert.equal(a.destinationId, OPERATOR_EVENTS_DESTINATION_ID);
      assert.equal(a.eventType, 'destination.filter_refuses_all');
      assert.equal(a.messageId, flaky.requests.at(-1)!.headers['webhook-id'], 'named by its webhook-id');
    }
    await retried.s.close();
  });
});

describe('destination health', () => {
  const receivers: Receiver[] = [];
  after(async () => {
    for (const r of receivers) await r.close();
  });

  it('auto-disables an endpoint (state and action records as documented, metric, event), tells bursts and expiring secrets', async () => {
    const operator = await startReceiver();
    receivers.push(operator);
    let now = Date.UTC(2026, 0, 1);
    const config = testConfig({
      destinations: [
        {
          id: 'd',
          type: 'webhooks',
          settings: {
            webhooks: [{ url: 'https://example.com/h' }],
            signing: {
              schemes: ['standard-webhooks'],
              standardWebhooks: { secrets: [{ secret: WHSEC, notAfter: new Date(now + HOUR).toISOString() }] },
            },
          },
        },
      ],
      delivery: { autoDisable: { after: '1m' } },
      operatorEvents: { url: operator.url, secret: WHSEC, deadLetterBurst: 2 },
    });
    const sent: { topic: string; key: string; value: Record<string, unknown> }[] = [];
    const sink: RecordSink = {
      send: async (topic, m) => void sent.push({ topic, key: String(m.key), value: JSON.parse(String(m.value)) }),
    };
    const registry = new Registry();
    const metrics = new DelivererMetrics(registry);
    const watch = new DestinationHealth({
      config: () => config,
      sink,
      client,
      metrics,
      logger,
      now: () => now,
      backoffMs: [10],
    });
    const fail = (at: number): AttemptResult => ({
      endpoint: 'https://example.com/h',
      outcome: 'retryable',
      at,
      latencyMs: 1,
      status: 503,
    });
    watch.attempted('d', fail(now));
    now += 60_000;
    watch.attempted('d', fail(now));
    const t = config.kafka.topics;
    await waitUntil(() => sent.filter((s) => s.topic !== t.attempts).length === 2, 5_000, 'state and action written');
    const state = sent.find((s) => s.topic === t.destinationState)!;
    assert.equal(state.key, 'd/https://example.com/h');
    assert.deepEqual(Object.keys(state.value).sort(), ['at', 'auto', 'by', 'reason', 'state']);
    assert.equal(state.value.state, 'disabled');
    assert.equal(state.value.by, 'sluice');
    assert.match(String(state.value.reason), /^no 2xx since 2026-01-01T00:00:00\.000Z; last error: http_503$/);
    const action = sent.find((s) => s.topic === t.destinationActions)!;
    assert.equal(action.value.action, 'disable');
    assert.equal(action.value.endpointRef, 'https://example.com/h');
    assert.match(await registry.metrics(), /sluice_deliverer_auto_disabled_total\{destination="d"\} 1/);

    for (let i = 0; i < 3; i++) watch.deadLettered('d');
    watch.signals.checkSecrets();
    watch.signals.checkSecrets();
    await waitUntil(() => operator.requests.length === 3, 5_000, 'three operator events');
    const types = operator.requests.map((r) => JSON.parse(r.body.toString()).type);
    assert.deepEqual(types, ['endpoint.disabled', 'destination.dead_letter_burst', 'signing_secret.expiring']);

    // Action records: an operator's action is told with who and why; auto-disable's and odd records are not.
    const record = (r: unknown) => watch.relay.record(Buffer.from(JSON.stringify(r)));
    const at = '2026-01-01T01:00:00.000Z';
    record(actionRecord('disable', 'd', 'e', { reason: 'x', by: 'sluice', byTokenId: 'sluice', at, auto: true }));
    record({ ...actionRecord('pause', 'd', undefined, { reason: 'x', by: 'y', at }), action: 'constructor' });
    record({ ...actionRecord('pause', 'd', undefined, { reason: 'x', by: 'y', at }), by: '' });
    record({ action: 'pause', reason: 'no destination' });
    record(42);
    watch.relay.record(Buffer.from('not json'));
    watch.relay.record(null);
    record(actionRecord('pause', 'd', undefined, { reason: 'maintenance', by: 'ana', byTokenId: 'tok-ana', at }));
    // Recorded before actions named their token: told without an id.
    record(actionRecord('resume', 'd', 'e', { reason: 'done', by: 'admin', at }));
    await waitUntil(() => operator.requests.length === 5, 5_000, 'the pause and the resume told');
    await sleep(100);
    assert.equal(operator.requests.length, 5, 'only the pause and the resume');
    assert.deepEqual(
      operator.requests.slice(3).map((r) => JSON.parse(r.body.toString())),
      [
        { type: 'destination.paused', at, destinationId: 'd', reason: 'maintenance', by: 'ana', byTokenId: 'tok-ana' },
        { type: 'endpoint.resumed', at, destinationId: 'd', endpointRef: 'e', reason: 'done', by: 'admin' },
      ],
    );
    await watch.stop();
  });
});
