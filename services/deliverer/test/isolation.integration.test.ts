import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SluiceConfig } from '@sluice/config';
import { retryStateFromHeaders, retryStateToHeaders, RETRY_HEADERS, type AttemptEvent } from '@sluice/envelope';
import {
  sleep,
  startBlackHole,
  startReceiver,
  testConfig,
  testServiceContext,
  waitUntil,
  type BlackHole,
  type Receiver,
} from '@sluice/testkit';
import { receivedEnvelope, scrapeMetrics, testKafka, watchTopics } from '@sluice/testkit';
import type { Kafka } from 'kafkajs';
import { createDeliverer, type DelivererService } from '../src/index.ts';
import { produceEvents } from './kafka-helpers.ts';

const ev = (sourceId: string, messageId: string) => receivedEnvelope({ sourceId, messageId });

/** A deliverer on its own topics with `raw` as config, the records it writes, and helpers to read them. */
async function startHarness(raw: Record<string, unknown>) {
  const config: SluiceConfig = testConfig({
    ...raw,
    delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] }, ...(raw.delivery as object) },
  });
  const ctx = testServiceContext('deliverer', config);
  const service: DelivererService = await createDeliverer(ctx, { port: 0 }).start();
  const kafka: Kafka = testKafka({ clientId: 'isolation-test' });
  const t = config.kafka.topics;
  const collected = await watchTopics(kafka, [t.retry, t.deadLetter, t.attempts]);
  const attempts = () => collected.records(t.attempts).map((x) => JSON.parse(x.value!.toString()) as AttemptEvent);
  return {
    config,
    service,
    kafka,
    attempts,
    attemptsOf: (messageId: string) => attempts().filter((a) => a.messageId === messageId),
    retriesOf: (messageId: string) =>
      collected.records(t.retry).filter((x) => x.headers[RETRY_HEADERS.messageId] === messageId),
    retries: () => collected.records(t.retry),
    metrics: () => scrapeMetrics(service.port),
    close: async () => {
      await service.close();
      await collected.stop();
    },
  };
}
type Harness = Awaited<ReturnType<typeof startHarness>>;

describe('per-endpoint circuit breaker (real Kafka, real HTTP endpoint)', () => {
  let endpoint: Receiver;
  let h: Harness;
  const COOLDOWN = 2_000;

  before(async () => {
    // Answers after 2 s: every request times out at the 300 ms deadline.
    endpoint = await startReceiver({ behaviour: () => ({ status: 200, delayMs: 2_000 }) });
    h = await startHarness({
      sources: [{ id: 's-cb', writeKeys: ['k-cb'] }],
      destinations: [
        { id: 'd-cb', type: 'webhooks', sourceIds: ['s-cb'], settings: { webhooks: [{ url: endpoint.url }] } },
      ],
      delivery: { timeout: '300ms', circuitBreaker: { failures: 3, cooldown: `${COOLDOWN}ms` } },
      retry: { schedule: ['100ms'] },
    });
  });

  after(async () => {
    await h?.close();
    await endpoint?.close();
  });

  it('opens after 3 timeouts, skips with a circuit_open record and a retry, probes after the cool-down and closes', async () => {
    await produceEvents(
      h.kafka,
      h.config.kafka.topics.events,
      ['cb-1', 'cb-2', 'cb-3'].map((id) => ev('s-cb', id)),
    );
    await waitUntil(() => h.attempts().filter((a) => a.error === 'timeout').length === 3, 15_000, 'three timeouts');
    const timeouts = h.attempts().filter((a) => a.error === 'timeout');
    const openedNoEarlierThan = Math.max(...timeouts.map((a) => Date.parse(a.at) + a.latencyMs));
    assert.equal(endpoint.handlerCalls, 3);

    // Open: the next events get no request; each is recorded as skipped and handed to the retry path.
    await produceEvents(h.kafka, h.config.kafka.topics.events, [ev('s-cb', 'cb-4'), ev('s-cb', 'cb-5')]);
    await waitUntil(
      () => h.retriesOf('cb-4').length + h.retriesOf('cb-5').length === 2,
      10_000,
      'two deferred retries',
    );
    await waitUntil(() => h.attemptsOf('cb-4').length + h.attemptsOf('cb-5').length === 2, 10_000, 'two skip records');
    assert.equal(endpoint.handlerCalls, 3, 'no request while open');
    for (const id of ['cb-4', 'cb-5']) {
      const [skip] = h.attemptsOf(id);
      assert.equal(skip!.outcome, 'circuit_open');
      assert.equal(skip!.endpoint, endpoint.url);
      assert.equal(skip!.latencyMs, 0);
      assert.equal(skip!.status, undefined);
      const state = retryStateFromHeaders(h.retriesOf(id)[0]!.headers);
      assert.equal(state.attempts, 0, 'no attempt counted');
      assert.equal(state.deferrals, 1);
      assert.deepEqual(state.history, []);
      assert.deepEqual(state.endpoints, [endpoint.url]);
      assert.match(state.lastError ?? '', /circuit_open/);
      // Due no earlier than the breaker's probe time, and the window counts from this hand-off.
      // 1 ms: `at` is whole milliseconds while the latency has tenths.
      const due = Date.parse(skip!.at) + state.retryAfterMs!;
      const probeAt = openedNoEarlierThan + COOLDOWN;
      assert.ok(
        due >= probeAt - 1,
        `due ${probeAt - due} ms before the probe time (${JSON.stringify({ skip, timeouts })})`,
      );
      assert.ok(Math.abs(state.firstAttemptAt - Date.parse(skip!.at)) < 1_000);
    }
    let text = await h.metrics();
    assert.match(text, /sluice_deliverer_deferred_total\{destination="d-cb",reason="circuit_open"[^}]*\} 2\n/);
    assert.match(text, /sluice_deliverer_circuit_open\{destination="d-cb",endpoint="0",state="open"[^}]*\} 1\n/);

    // The endpoint recovers; after the cool-down one probe goes, its answer closes the breaker.
    endpoint.behave(() => ({ status: 200 }));
    await sleep(Math.max(0, openedNoEarlierThan + COOLDOWN + 100 - Date.now()));
    await produceEvents(h.kafka, h.config.kafka.topics.events, [ev('s-cb', 'cb-6')]);
    await waitUntil(() => h.attemptsOf('cb-6').some((a) => a.outcome === 'success'), 10_000, 'the probe delivered');
    text = await h.metrics();
    assert.doesNotMatch(text, /sluice_deliverer_circuit_open\{/, 'closed');
    await produceEvents(h.kafka, h.config.kafka.topics.events, [ev('s-cb', 'cb-7')]);
    await waitUntil(
      () => h.attemptsOf('cb-7').some((a) => a.outcome === 'success'),
      10_000,
      'delivered normally after closing',
    );

    // Nothing lost: the skipped event, brought back as the retry service would, is delivered as attempt 1.
    const deferred = h.retriesOf('cb-4')[0]!;
    const state = retryStateFromHeaders(deferred.headers);
    const producer = h.kafka.producer();
    await producer.connect();
    await producer.send({
      topic: h.config.kafka.topics.redeliver,
      messages: [
        { key: deferred.key, value: deferred.value, headers: retryStateToHeaders({ ...state, dueAt: Date.now() }) },
      ],
    });
    await producer.disconnect();
    await waitUntil(
      () => h.attemptsOf('cb-4').some((a) => a.outcome === 'success'),
      10_000,
      'the deferred event delivered',
    );
    const delivered = h.attemptsOf('cb-4').find((a) => a.outcome === 'success')!;
    assert.equal(delivered.attempt, 1);
  });
});

describe("an endpoint's Retry-After holds back its other events", () => {
  let endpoint: Receiver;
  let h: Harness;

  // Long enough that the held events are read while it lasts on a loaded machine (the test then
  // waits it out once, for the time the endpoint named, not for another process).
  const HOLD_S = 15;
  const HOLD_MS = HOLD_S * 1_000;

  before(async () => {
    const first = { status: 503, headers: { 'retry-after': String(HOLD_S) } };
    endpoint = await startReceiver({ behaviour: (_req, i) => (i === 0 ? first : { status: 200 }) });
    h = await startHarness({
      sources: [{ id: 's-ra', writeKeys: ['k-ra'] }],
      destinations: [
        { id: 'd-ra', type: 'webhooks', sourceIds: ['s-ra'], settings: { webhooks: [{ url: endpoint.url }] } },
      ],
    });
  });

  after(async () => {
    await h?.close();
    await endpoint?.close();
  });

  it('until the time it named, never earlier: no request, a retry_after record, a retry due then', async () => {
    await produceEvents(h.kafka, h.config.kafka.topics.events, [ev('s-ra', 'ra-1')]);
    await waitUntil(() => h.retriesOf('ra-1').length === 1, 10_000, 'the 503 retried');
    assert.equal(
      retryStateFromHeaders(h.retriesOf('ra-1')[0]!.headers).retryAfterMs,
      HOLD_MS,
      'the event itself honours it',
    );
    const answeredAt = endpoint.requests[0]!.at;

    await produceEvents(h.kafka, h.config.kafka.topics.events, [ev('s-ra', 'ra-2'), ev('s-ra', 'ra-3')]);
    const handedOn = () => h.retriesOf('ra-2').length + h.retriesOf('ra-3').length === 2;
    await waitUntil(handedOn, 10_000, 'two held events handed to the retry path');
    await waitUntil(() => h.attemptsOf('ra-2').length + h.attemptsOf('ra-3').length === 2, 10_000, 'two skip records');
    // When the deliverer's hold ends, by its own clock (it started when the deliverer read the 503).
    let holdEnds = 0;
    for (const id of ['ra-2', 'ra-3']) {
      const [skip] = h.attemptsOf(id);
      assert.equal(skip!.outcome, 'retry_after');
      const state = retryStateFromHeaders(h.retriesOf(id)[0]!.headers);
      assert.equal(state.attempts, 0);
      const due = Date.parse(skip!.at) + state.retryAfterMs!;
      holdEnds = Math.max(holdEnds, due);
      assert.ok(due >= answeredAt + HOLD_MS, `due ${due - answeredAt} ms after the 503, before its Retry-After`);
      assert.ok(due <= answeredAt + HOLD_MS + 1_000, `due ${due - answeredAt} ms after the 503: held too long`);
    }
    assert.equal(endpoint.requests.length, 1, 'no request during the hold');

    // After the hold the endpoint gets requests again; none arrived before the time it named.
    await sleep(Math.max(0, holdEnds + 50 - Date.now()));
    await produceEvents(h.kafka, h.config.kafka.topics.events, [ev('s-ra', 'ra-4')]);
    await waitUntil(
      () => h.attemptsOf('ra-4').some((a) => a.outcome === 'success'),
      10_000,
      'delivered after the hold',
    );
    assert.ok(
      endpoint.requests.slice(1).every((r) => r.at >= answeredAt + HOLD_MS),
      'no request before the Retry-After time',
    );
    assert.match(
      await h.metrics(),
      /sluice_deliverer_deferred_total\{destination="d-ra",reason="retry_after"[^}]*\} 2\n/,
    );
  });
});

describe('a black-hole destination fed by the same source does not slow a healthy one', () => {
  let healthy: Receiver;
  let hole: BlackHole;
  let h: Harness;
  const EVENTS = 3_000;

  before(async () => {
    healthy = await startReceiver();
    hole = await startBlackHole();
    // Default deadline (5 s) and slots (128 per partition, 2 partitions): with events waiting for
    // every destination, each slot would be held 5 s by the black hole — about 51 events/s.
    h = await startHarness({
      sources: [{ id: 's-bh', writeKeys: ['k-bh'] }],
      destinations: [
        { id: 'd-healthy', type: 'webhooks', sourceIds: ['s-bh'], settings: { webhooks: [{ url: healthy.url }] } },
        { id: 'd-hole', type: 'webhooks', sourceIds: ['s-bh'], settings: { webhooks: [{ url: hole.url }] } },
      ],
    });
  });

  after(async () => {
    await h?.close();
    await healthy?.close();
    await hole?.close();
  });

  const title =
    `${EVENTS} events reach the healthy destination within 30 s (about 60 s if the black hole held the slots); ` +
    'every one is handed on for the black hole';
  it(title, async () => {
    const started = Date.now();
    await produceEvents(
      h.kafka,
      h.config.kafka.topics.events,
      Array.from({ length: EVENTS }, (_, i) => ev('s-bh', `bh-${i}`)),
    );
    await healthy.waitFor(EVENTS, 30_000 - (Date.now() - started));
    const took = Date.now() - started;
    assert.ok(took < 30_000, `healthy destination took ${took} ms`);
    // Nothing lost for the black hole: every event is on the retry topic for it (deferred, or timed out).
    await waitUntil(
      () => {
        const forHole = h.retries().filter((x) => x.headers[RETRY_HEADERS.destinationId] === 'd-hole');
        return new Set(forHole.map((x) => x.headers[RETRY_HEADERS.messageId])).size === EVENTS;
      },
      20_000,
      'a retry record for the black hole per event',
    );
    const holeAttempts = h.attempts().filter((a) => a.destinationId === 'd-hole');
    const sent = holeAttempts.filter((a) => a.outcome === 'retryable').length;
    assert.ok(sent <= 64, `${sent} requests went to the black hole`);
    assert.ok(hole.connections > 0);
    console.log(
      `healthy: ${EVENTS} in ${took} ms; black hole: ${sent} requests, ${holeAttempts.length - sent} deferred`,
    );
  });
});
