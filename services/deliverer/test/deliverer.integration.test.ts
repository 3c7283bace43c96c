import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseConfig, type SluiceConfig } from '@sluice/config';
import {
  recordKey,
  retryStateFromHeaders,
  retryStateToHeaders,
  RETRY_HEADERS,
  REJECT_HEADERS,
  type AttemptEvent,
  type EventEnvelope,
} from '@sluice/envelope';
import {
  loadVector,
  sleep,
  startReceiver,
  testConfig,
  testServiceContext,
  waitUntil,
  type Receiver,
} from '@sluice/testkit';
import { fileKafka, receivedEnvelope, scrapeMetrics, testKafka, watchTopics } from '@sluice/testkit';
import { verifySignature } from '@sluice/webhook-signature';
import type { Kafka } from 'kafkajs';
import { createDeliverer, type DelivererService } from '../src/index.ts';
import { produceEvents } from './kafka-helpers.ts';

const SECRET = 'whsec-golden';
const vectors = loadVector<{ cases: { name: string; envelope: EventEnvelope; body: Record<string, unknown> }[] }>(
  'payloads.json',
);

const ev = (sourceId: string, messageId: string, extra: Partial<EventEnvelope> = {}) =>
  receivedEnvelope({ sourceId, messageId, ...extra });

const byPath =
  (statuses: Record<string, number>, fallback = 200) =>
  (req: { path: string }) => ({ status: statuses[req.path] ?? fallback });

describe('deliverer with real Kafka and real HTTP(S) receivers', () => {
  const r = {} as Record<
    | 'golden'
    | 'plain'
    | 'multi'
    | 'all500'
    | 'all404'
    | 'slow'
    | 'tls'
    | 'integ'
    | 'redeliver'
    | 'before'
    | 'afterReload',
    Receiver
  >;
  let raw: Record<string, unknown>;
  let config: SluiceConfig;
  let ctx: ReturnType<typeof testServiceContext>;
  let service: DelivererService;
  let kafka: Kafka;
  let collected: Awaited<ReturnType<typeof watchTopics>>;
  const five = (base: string) => [1, 2, 3, 4, 5].map((i) => ({ url: `${base}/${i}` }));

  before(async () => {
    r.golden = await startReceiver();
    r.plain = await startReceiver();
    r.multi = await startReceiver({
      behaviour: byPath({ '/hook/1': 500, '/hook/2': 500, '/hook/3': 200, '/hook/4': 500, '/hook/5': 500 }),
    });
    r.all500 = await startReceiver({ behaviour: () => ({ status: 500, body: 'boom' }) });
    r.all404 = await startReceiver({ behaviour: () => ({ status: 404 }) });
    r.slow = await startReceiver({ behaviour: () => ({ status: 200, delayMs: 6_000 }) });
    r.tls = await startReceiver({ tls: true });
    r.integ = await startReceiver();
    r.redeliver = await startReceiver({ behaviour: () => ({ status: 503, headers: { 'retry-after': '7' } }) });
    r.before = await startReceiver();
    r.afterReload = await startReceiver();
    const sources = [
      'golden',
      'plain',
      'multi',
      'all500',
      'all404',
      'slow',
      'tls',
      'integ',
      'redeliver',
      'reload',
      'junk',
    ].map((id) => ({ id: `s-${id}`, writeKeys: [`k-${id}`] }));
    const dest = (
      id: string,
      webhooks: { url: string; headers?: Record<string, string> }[],
      sharedSecret?: string,
    ) => ({
      id: `d-${id}`,
      type: 'webhooks',
      sourceIds: [`s-${id}`],
      settings: { webhooks, ...(sharedSecret && { sharedSecret }) },
    });
    raw = {
      sources,
      destinations: [
        dest('golden', [{ url: r.golden.url, headers: { 'X-Team': 'growth' } }], SECRET),
        dest('plain', [{ url: r.plain.url }]),
        dest('multi', five(r.multi.url)),
        dest('all500', five(r.all500.url), 's'),
        dest('all404', five(r.all404.url)),
        dest('slow', [{ url: r.slow.url }]),
        dest('tls', [{ url: r.tls.url }]),
        dest('integ', [{ url: r.integ.url }]),
        dest('redeliver', [{ url: `${r.redeliver.url}/a` }, { url: `${r.redeliver.url}/b` }], 'current-secret'),
        dest('reload', [{ url: r.before.url }]),
        dest('junk', [{ url: r.plain.url }]),
      ],
      delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
    };
    config = testConfig(raw);
    ctx = testServiceContext('deliverer', config);
    service = await createDeliverer(ctx, { port: 0 }).start();
    kafka = testKafka({ clientId: 'deliverer-test' });
    const t = config.kafka.topics;
    collected = await watchTopics(kafka, [t.retry, t.deadLetter, t.attempts, t.rejected]);
  });

  after(async () => {
    await service?.close();
    await collected?.stop();
    await Promise.all(Object.values(r).map((x) => x.close()));
  });

  const topics = () => config.kafka.topics;
  const attemptsOf = (messageId: string) =>
    collected
      .records(topics().attempts)
      .map((x) => JSON.parse(x.value!.toString()) as AttemptEvent)
      .filter((a) => a.messageId === messageId);
  const withMessageId = (topic: string, messageId: string) =>
    collected.records(topic).filter((x) => x.headers[RETRY_HEADERS.messageId] === messageId);

  it('serves ops routes', async () => {
    const res = await fetch(`http://127.0.0.1:${service.port}/readyz`);
    assert.equal(res.status, 200);
  });

  it('renders all seven body shapes exactly, signs the exact bytes, and sends the delivery header set', async () => {
    const events = vectors.cases.map((c) => ({ ...c.envelope, sourceId: 's-golden' }));
    await produceEvents(kafka, topics().events, events);
    const requests = await r.golden.waitFor(7, 20_000);
    for (const c of vectors.cases) {
      const got = requests.find((q) => q.headers['x-message-id'] === c.envelope.messageId);
      assert.ok(got, `${c.name} delivered`);
      assert.deepEqual(JSON.parse(got.body.toString('utf8')), c.body, `${c.name} body`);
      assert.ok(
        verifySignature(SECRET, got.body, String(got.headers['x-signature'])),
        `${c.name} signature recomputes`,
      );
      assert.equal(got.headers['user-agent'], 'Sluice/1.0');
      assert.equal(got.headers['content-type'], 'application/json');
      assert.equal(got.headers['x-team'], 'growth');
      assert.equal(got.method, 'POST');
      const names = Object.keys(got.headers)
        .filter((h) => !['host', 'content-length', 'connection'].includes(h))
        .sort();
      assert.deepEqual(names, ['content-type', 'user-agent', 'x-message-id', 'x-signature', 'x-team']);
    }
    const del = requests.find((q) => q.headers['x-message-id'] === 'del-1')!;
    assert.deepEqual(Object.keys(JSON.parse(del.body.toString())).sort(), ['timestamp', 'type', 'userId']);
    const alias = JSON.parse(requests.find((q) => q.headers['x-message-id'] === 'm-6')!.body.toString());
    assert.equal(alias['Previous ID'], 'a-9');
    assert.equal(alias['User ID'], 'u-new');
  });

  it('sends no X-Signature when the destination has no secret', async () => {
    await produceEvents(kafka, topics().events, [ev('s-plain', 'plain-1')]);
    const [got] = await r.plain.waitFor(1);
    assert.equal(got!.headers['x-signature'], undefined);
    assert.equal(got!.headers['x-message-id'], 'plain-1');
  });

  it('five endpoints, four 500 and one 200: delivered, nothing retried', async () => {
    await produceEvents(kafka, topics().events, [ev('s-multi', 'multi-1')]);
    await r.multi.waitFor(5);
    await waitUntil(() => attemptsOf('multi-1').length === 5, 10_000, '5 attempt records');
    await sleep(1_000);
    const attempts = attemptsOf('multi-1');
    assert.equal(attempts.filter((a) => a.outcome === 'success').length, 1);
    assert.equal(attempts.filter((a) => a.outcome === 'retryable').length, 4);
    assert.ok(attempts.every((a) => a.attempt === 1 && a.destinationId === 'd-multi'));
    assert.equal(withMessageId(topics().retry, 'multi-1').length, 0);
    assert.equal(withMessageId(topics().deadLetter, 'multi-1').length, 0);
  });

  it('all five answer 500: exactly one record on the retry topic, carrying the sent bytes and the retry state', async () => {
    const event = ev('s-all500', 'all500-1');
    await produceEvents(kafka, topics().events, [event]);
    const requests = await r.all500.waitFor(5);
    await waitUntil(() => withMessageId(topics().retry, 'all500-1').length > 0, 10_000, 'retry record');
    await waitUntil(() => attemptsOf('all500-1').length === 5, 10_000, '5 attempt records');
    await sleep(1_500);
    const retries = withMessageId(topics().retry, 'all500-1');
    assert.equal(retries.length, 1);
    const [rec] = retries;
    assert.equal(rec!.key, recordKey(event));
    assert.ok(rec!.value!.equals(requests[0]!.body), 'same body bytes');
    const state = retryStateFromHeaders(rec!.headers);
    assert.equal(state.attempts, 1);
    assert.equal(state.destinationId, 'd-all500');
    assert.equal(state.eventType, 'track');
    assert.equal(state.receivedAt, event.receivedAt);
    assert.deepEqual(
      [...state.endpoints].sort(),
      five(r.all500.url)
        .map((e) => e.url)
        .sort(),
    );
    assert.equal(state.history.length, 5);
    assert.ok(state.history.every((h) => h.error === 'http_500' && h.attempt === 1));
    assert.ok(Math.abs(state.firstAttemptAt - Date.now()) < 30_000);
    assert.match(state.lastError ?? '', /http_500/);
    assert.equal(withMessageId(topics().deadLetter, 'all500-1').length, 0);
    const snippets = attemptsOf('all500-1').map((a) => a.responseSnippet);
    assert.deepEqual(snippets, ['boom', 'boom', 'boom', 'boom', 'boom']);
  });

  it('all five answer 404: dead-lettered at once, never retried', async () => {
    await produceEvents(kafka, topics().events, [ev('s-all404', 'all404-1')]);
    await waitUntil(() => withMessageId(topics().deadLetter, 'all404-1').length > 0, 10_000, 'dead letter');
    await sleep(1_000);
    const [dead] = withMessageId(topics().deadLetter, 'all404-1');
    const state = retryStateFromHeaders(dead!.headers);
    assert.equal(state.deadReason, 'permanent_failure');
    assert.ok(state.deadAt! > 0);
    assert.equal(state.history.length, 5);
    assert.equal(withMessageId(topics().retry, 'all404-1').length, 0);
    assert.equal(withMessageId(topics().deadLetter, 'all404-1').length, 1);
  });

  it('an endpoint that sleeps 6 s is aborted at 5 s ± 0.3 s and retried', async () => {
    await produceEvents(kafka, topics().events, [ev('s-slow', 'slow-1')]);
    await waitUntil(() => withMessageId(topics().retry, 'slow-1').length > 0, 15_000, 'retry record');
    // Written in the same batch as the retry record, but read back from another topic: wait for it too.
    await waitUntil(() => attemptsOf('slow-1').length > 0, 10_000, 'attempt record');
    const [attempt] = attemptsOf('slow-1');
    assert.equal(attempt!.outcome, 'retryable');
    assert.equal(attempt!.error, 'timeout');
    assert.ok(Math.abs(attempt!.latencyMs - 5_000) <= 300, `aborted after ${attempt!.latencyMs} ms`);
    const state = retryStateFromHeaders(withMessageId(topics().retry, 'slow-1')[0]!.headers);
    assert.equal(state.lastError, `${r.slow.url}: timeout`);
  });

  it('HTTPS with a self-signed certificate: no request reaches the handler; a permanent error is recorded', async () => {
    await produceEvents(kafka, topics().events, [ev('s-tls', 'tls-1')]);
    await waitUntil(() => attemptsOf('tls-1').length > 0, 10_000, 'attempt record');
    const [attempt] = attemptsOf('tls-1');
    assert.equal(attempt!.outcome, 'permanent');
    assert.equal(attempt!.error, 'DEPTH_ZERO_SELF_SIGNED_CERT');
    assert.equal(r.tls.handlerCalls, 0);
    await waitUntil(() => withMessageId(topics().deadLetter, 'tls-1').length > 0, 10_000, 'dead letter');
  });

  it('the integrations object: All:false, All:false + Webhooks:true, Webhooks:false', async () => {
    await produceEvents(kafka, topics().events, [
      ev('s-integ', 'int-all-false', { integrations: { All: false } }),
      ev('s-integ', 'int-webhooks-true', { integrations: { All: false, Webhooks: true } }),
      ev('s-integ', 'int-webhooks-false', { integrations: { Webhooks: false } }),
      ev('s-integ', 'int-default', { integrations: {} }),
    ]);
    await r.integ.waitFor(2);
    await sleep(1_500);
    assert.deepEqual(r.integ.requests.map((q) => q.headers['x-message-id']).sort(), [
      'int-default',
      'int-webhooks-true',
    ]);
  });

  it('redelivers the exact bytes to the endpoints the retry names that still exist, re-signed with the current secret', async () => {
    const body = Buffer.from(
      '{"version":1,"type":"track","userId":"u-r","timestamp":"2026-11-21T10:00:00.000Z","context":{},"messageId":"redo-1","event":"E","properties":{}}',
    );
    // Within the window: the deliverer dead-letters a retry whose window closed (window-and-timeouts.test.ts).
    const firstAttemptAt = Date.now() - 60_000;
    const history = [
      {
        attempt: 1,
        endpoint: `${r.redeliver.url}/b`,
        at: firstAttemptAt,
        outcome: 'retryable' as const,
        error: 'http_500',
        latencyMs: 3,
      },
    ];
    const headers = retryStateToHeaders({
      messageId: 'redo-1',
      sourceId: 's-redeliver',
      destinationId: 'd-redeliver',
      eventType: 'track',
      endpoints: [`${r.redeliver.url}/b`, 'https://removed.example.com/hook'],
      firstAttemptAt,
      attempts: 1,
      history,
      receivedAt: '2026-11-21T10:00:00.010Z',
      dueAt: Date.now(),
    });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: topics().redeliver, messages: [{ key: 's-redeliver:u-r', value: body, headers }] });
    // A redelivery for a destination that no longer exists is dead-lettered as destination_deleted.
    await producer.send({
      topic: topics().redeliver,
      messages: [
        {
          key: 's-redeliver:u-x',
          value: body,
          headers: retryStateToHeaders({
            messageId: 'redo-gone',
            sourceId: 's-redeliver',
            destinationId: 'd-deleted',
            eventType: 'track',
            endpoints: ['https://x.example.com/'],
            firstAttemptAt: 1_000,
            attempts: 3,
            history: [],
          }),
        },
      ],
    });
    await producer.disconnect();
    const [got] = await r.redeliver.waitFor(1);
    assert.equal(got!.path, '/hook/b');
    assert.ok(got!.body.equals(body), 'exact bytes');
    assert.ok(verifySignature('current-secret', body, String(got!.headers['x-signature'])));
    await waitUntil(() => withMessageId(topics().retry, 'redo-1').length > 0, 10_000, 'second retry record');
    const next = retryStateFromHeaders(withMessageId(topics().retry, 'redo-1')[0]!.headers);
    assert.equal(next.attempts, 2);
    assert.equal(next.firstAttemptAt, firstAttemptAt);
    assert.deepEqual(next.endpoints, [`${r.redeliver.url}/b`]);
    assert.equal(next.history.length, 2);
    assert.equal(next.history[1]!.attempt, 2);
    assert.equal(next.retryAfterMs, 7_000);
    assert.equal(next.receivedAt, '2026-11-21T10:00:00.010Z');
    assert.equal(next.dueAt, undefined);
    assert.equal(r.redeliver.requests.length, 1, 'endpoint a was not named by the retry');
    await waitUntil(
      () => withMessageId(topics().deadLetter, 'redo-gone').length > 0,
      10_000,
      'destination_deleted dead letter',
    );
    const dead = retryStateFromHeaders(withMessageId(topics().deadLetter, 'redo-gone')[0]!.headers);
    assert.equal(dead.deadReason, 'destination_deleted');
    assert.equal(dead.lastError, 'destination d-deleted is gone');
    assert.equal(dead.attempts, 3);
  });

  it('sends undecodable and invalid records to the rejected topic and keeps the partition flowing', async () => {
    const producer = kafka.producer();
    await producer.connect();
    const key = 's-junk:u-junk';
    await producer.send({
      topic: topics().events,
      messages: [
        { key, value: 'not json at all' },
        {
          key,
          value: JSON.stringify({
            sourceId: 's-junk',
            type: 'track',
            messageId: 'bad-1',
            timestamp: 't',
            userId: 'u-junk',
          }),
        },
        { key, value: JSON.stringify(ev('s-junk', 'junk-bad-ts', { userId: 'u-junk', timestamp: 'not-a-time' })) },
        { key, value: JSON.stringify(ev('s-junk', 'junk-ok', { userId: 'u-junk' })) },
      ],
    });
    await producer.disconnect();
    await waitUntil(
      () => r.plain.requests.some((q) => q.headers['x-message-id'] === 'junk-ok'),
      10_000,
      'the good record after the bad ones',
    );
    await waitUntil(() => collected.records(topics().rejected).length >= 3, 10_000, 'rejected records');
    const codes = collected
      .records(topics().rejected)
      .map((x) => x.headers[REJECT_HEADERS.code])
      .sort();
    assert.deepEqual(codes, ['invalid_envelope', 'invalid_timestamp', 'not_json']);
    assert.ok(collected.records(topics().rejected).every((x) => x.headers[REJECT_HEADERS.origin] === 'deliverer'));
    assert.equal(
      collected
        .records(topics().rejected)
        .find((x) => x.headers[REJECT_HEADERS.code] === 'not_json')!
        .value!.toString(),
      'not json at all',
    );
  });

  it('a config reload applies to deliveries that start after it', async () => {
    await produceEvents(kafka, topics().events, [ev('s-reload', 'reload-before')]);
    await r.before.waitFor(1);
    const destinations = (raw.destinations as { id: string; settings: unknown }[]).map((d) =>
      d.id === 'd-reload' ? { ...d, settings: { webhooks: [{ url: r.afterReload.url }], sharedSecret: 'rotated' } } : d,
    );
    ctx.config.set(parseConfig({ ...raw, destinations, kafka: fileKafka(config) }));
    await produceEvents(kafka, topics().events, [ev('s-reload', 'reload-after')]);
    const [got] = await r.afterReload.waitFor(1);
    assert.equal(got!.headers['x-message-id'], 'reload-after');
    assert.ok(verifySignature('rotated', got!.body, String(got!.headers['x-signature'])));
    assert.equal(r.before.requests.length, 1);
  });

  it('exports metrics', async () => {
    const text = await scrapeMetrics(service.port);
    for (const name of [
      'sluice_deliverer_attempts_total',
      'sluice_deliverer_attempt_duration_seconds',
      'sluice_deliverer_end_to_end_seconds',
      'sluice_deliverer_delivered_total',
      'sluice_deliverer_retried_total',
      'sluice_deliverer_dead_lettered_total',
      'sluice_deliverer_in_flight_requests',
      'sluice_deliverer_rejected_records_total',
    ]) {
      assert.ok(text.includes(name), name);
    }
    assert.match(text, /sluice_deliverer_dead_lettered_total\{[^}]*reason="permanent_failure"/);
  });
});
