import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { createLogger } from '@sluice/logging';
import { type Receiver, sleep, startReceiver, testConfig, waitUntil } from '@sluice/testkit';
import { Webhook } from 'standardwebhooks';
import type { RecordSink } from '@sluice/kafka';
import { Registry } from 'prom-client';
import { OperatorSender } from '../src/attempt/health/operator-sender.ts';
import type { AttemptResult } from '../src/transport/attempt-result.ts';
import { DelivererMetrics } from '../src/service/metrics.ts';
import { OperatorWatch } from '../src/attempt/health/operator-watch.ts';
import { OPERATOR_QUEUE_MAX } from '../src/service/constants.ts';
import { AutoDisableTracker } from '../src/attempt/health/auto-disable.ts';
import { DeadLetterBursts, expiringKeys, RefusalStreaks } from '../src/attempt/health/operator-signals.ts';

const HOUR = 3_600_000;
const WHSEC = `whsec_${randomBytes(32).toString('base64')}`;
const logger = createLogger({ name: 'operator-events-test', level: 'silent' });

describe('auto-disable tracker', () => {
  it('disables an endpoint only once no attempt got a 2xx for the whole time, then counts anew', () => {
    const t = new AutoDisableTracker();
    assert.equal(t.observe('d', 'e', false, 0, 'http_503', 1_000), undefined);
    assert.equal(t.observe('d', 'e', false, 999, 'timeout', 1_000), undefined);
    assert.deepEqual(t.observe('d', 'e', false, 1_000, 'http_500', 1_000), {
      destinationId: 'd',
      endpoint: 'e',
      failingSince: 0,
      lastError: 'http_500',
    });
    // A new count starts with the next failure.
    assert.equal(t.observe('d', 'e', false, 1_500, 'http_503', 1_000), undefined);
    assert.equal(t.observe('d', 'e', false, 2_499, 'http_503', 1_000), undefined);
    assert.ok(t.observe('d', 'e', false, 2_500, 'http_503', 1_000));
  });

  it('a 2xx resets the count; endpoints and destinations count apart; 0 is off', () => {
    const t = new AutoDisableTracker();
    t.observe('d', 'e', false, 0, 'x', 1_000);
    t.observe('d', 'e', true, 500, '', 1_000);
    assert.equal(t.observe('d', 'e', false, 1_200, 'x', 1_000), undefined);
    assert.equal(t.observe('d', 'other', false, 0, 'x', 1_000), undefined);
    assert.equal(t.observe('d2', 'e', false, 0, 'x', 1_000), undefined);
    assert.equal(t.observe('d', 'e', false, 10_000, 'x', 0), undefined);
    t.retain((d) => d !== 'd');
    assert.equal(t.observe('d', 'e', false, 20_000, 'x', 1_000), undefined, 'forgotten: a new count');
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
    assert.equal(s.verdict('d', true, 2), false);
    assert.equal(s.verdict('d', false, 2), false);
    assert.equal(s.verdict('d', true, 2), false);
    assert.equal(s.verdict('d', true, 2), true);
    assert.equal(s.verdict('d', true, 2), false, 'told once per streak');
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

describe('operator sender', () => {
  const receivers: Receiver[] = [];
  after(async () => {
    for (const r of receivers) await r.close();
  });
  const sender = async (status: (n: number) => number, counts: string[]) => {
    const r = await startReceiver({ behaviour: (_req, i) => ({ status: status(i) }) });
    receivers.push(r);
    const s = new OperatorSender({
      settings: () => ({ url: r.url, secret: WHSEC, deadLetterBurst: 1, filterRefusesAll: 1, secretExpiryNoticeMs: 1 }),
      timeoutMs: () => 2_000,
      logger,
      now: Date.now,
      counted: (type, outcome) => counts.push(`${type}:${outcome}`),
      backoffMs: [10, 10],
    });
    return { r, s };
  };

  it('POSTs each event signed (verified with the standardwebhooks library), in order, retrying failures', async () => {
    const counts: string[] = [];
    // The first request fails: the event is sent again.
    const { r, s } = await sender((i) => (i === 0 ? 503 : 204), counts);
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
    const counts: string[] = [];
    const { s } = await sender(() => 500, counts);
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
});

describe('operator watch', () => {
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
    const watch = new OperatorWatch({ config: () => config, sink, metrics, logger, now: () => now, backoffMs: [10] });
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
    await waitUntil(() => sent.length === 2, 5_000, 'state and action written');
    const t = config.kafka.topics;
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
    watch.checkSecrets();
    watch.checkSecrets();
    await waitUntil(() => operator.requests.length === 3, 5_000, 'three operator events');
    const types = operator.requests.map((r) => JSON.parse(r.body.toString()).type);
    assert.deepEqual(types, ['endpoint.disabled', 'destination.dead_letter_burst', 'signing_secret.expiring']);

    // Action records: an operator's action is told with who and why; auto-disable's and odd records are not.
    const record = (r: unknown) => watch.onActionRecord(Buffer.from(JSON.stringify(r)));
    record({ action: 'disable', destinationId: 'd', endpointRef: 'e', reason: 'x', by: 'sluice', auto: true });
    record({ action: 'constructor', destinationId: 'd', reason: 'x', by: 'y' });
    record({ action: 'pause', reason: 'no destination' });
    record(42);
    watch.onActionRecord(Buffer.from('not json'));
    watch.onActionRecord(null);
    record({ action: 'pause', destinationId: 'd', reason: 'maintenance', by: 'ana', at: '2026-01-01T01:00:00.000Z' });
    await waitUntil(() => operator.requests.length === 4, 5_000, 'the pause told');
    await sleep(100);
    assert.equal(operator.requests.length, 4, 'only the pause');
    assert.deepEqual(JSON.parse(operator.requests[3]!.body.toString()), {
      type: 'destination.paused',
      at: '2026-01-01T01:00:00.000Z',
      destinationId: 'd',
      reason: 'maintenance',
      by: 'ana',
    });
    await watch.stop();
  });
});
