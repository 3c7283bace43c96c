import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { REJECT_HEADERS, RETRY_HEADERS, retryStateFromHeaders } from '@sluice/envelope';
import { SafeProducer, type Kafka } from '@sluice/kafka';
import { sleep, testConfig, testServiceContext, waitUntil } from '@sluice/testkit';
import { createTestTopics, scrapeMetrics, testKafka, type TopicWatcher, watchTopics } from '@sluice/testkit';
import { createRetry, type RetryService } from '@sluice/retry';
import { intakeGroupId, tierGroupId } from '../src/config.ts';
import { retryMessage, retryState } from './helpers.ts';

const shrunk = { retry: { window: '8s', schedule: ['1s', '2s', '4s'], tiers: ['1s', '2s', '4s'] } };
/** The source and destination the retries are for (`retryState`): a destination gone would dead-letter them `destination_deleted`. */
const routes = {
  sources: [{ id: 'src-1', writeKeys: ['k'] }],
  destinations: [
    { id: 'dest-1', type: 'webhooks', sourceIds: ['src-1'], settings: { webhookUrl: 'https://hooks.example.com/in' } },
  ],
};

describe('retry service alone: sluice.retry → tiers → sluice.redeliver / dead letters', () => {
  const config = testConfig({ ...shrunk, ...routes });
  const { topics } = config.kafka;
  let kafka: Kafka;
  let producer: SafeProducer;
  let service: RetryService;
  let watched: TopicWatcher;
  const redeliver = () => watched.records(topics.redeliver);
  const dead = () => watched.records(topics.deadLetter);
  const rejected = () => watched.records(topics.rejected);

  before(async () => {
    kafka = testKafka();
    await createTestTopics(kafka, config);
    producer = new SafeProducer(kafka);
    await producer.connect();
    service = await createRetry(testServiceContext('retry', config), { port: 0, lagIntervalMs: 500 }).start();
    watched = await watchTopics(kafka, [topics.redeliver, topics.deadLetter, topics.rejected], 20);
  });

  after(async () => {
    await service?.close();
    await Promise.all([watched?.stop(), producer?.disconnect()]);
  });

  it('forwards each retry at or after its due time (schedule ± jitter, or Retry-After), never early, bytes and key unchanged', async () => {
    const now = Date.now();
    const states = [
      retryState({ attempts: 1 }), // ~1 s
      retryState({ attempts: 2 }), // ~2 s: rides the 2 s tier
      retryState({ attempts: 3 }), // ~4 s: 4 s tier (or 2 s + re-tier when jitter is below 4 s)
      retryState({ attempts: 1, retryAfterMs: 3_000 }), // exactly 3 s: 2 s tier, then the final tier
    ];
    await producer.send(
      topics.retry,
      states.map((s) => retryMessage(s)),
    );
    const ids = new Set(states.map((s) => s.messageId));
    await waitUntil(
      () => redeliver().filter((r) => ids.has(r.headers[RETRY_HEADERS.messageId]!)).length === 4,
      15_000,
      'four forwards',
    );
    for (const state of states) {
      const got = redeliver().find((r) => r.headers[RETRY_HEADERS.messageId] === state.messageId)!;
      const forwarded = retryStateFromHeaders(got.headers);
      const dueAt = forwarded.dueAt!;
      const base = state.retryAfterMs ?? [1_000, 2_000, 4_000][state.attempts - 1]!;
      const wait = dueAt - now;
      const slack = 1_000; // producing the record and the service picking it up
      if (state.retryAfterMs !== undefined) assert.ok(wait >= base && wait <= base + slack, `Retry-After wait ${wait}`);
      else assert.ok(wait >= base * 0.9 && wait <= base * 1.1 + slack, `wait ${wait} for base ${base}`);
      assert.ok(got.at >= dueAt, `read ${got.at - dueAt} ms before due`);
      assert.ok(got.at - dueAt < 1_000, `late by ${got.at - dueAt} ms`);
      assert.equal(got.value!.toString(), `{"messageId":"${state.messageId}"}`);
      assert.equal(got.key, 'src-1:user-1');
      assert.equal(forwarded.retryAfterMs, undefined, 'an applied Retry-After is not carried on');
      assert.deepEqual(forwarded.history, state.history);
    }
  });

  it('dead-letters a retry whose window is spent, with its whole history; a clipped one still gets its last attempt', async () => {
    const spent = retryState({ firstAttemptAt: Date.now() - 8_500, attempts: 4 });
    spent.history = [1, 2, 3, 4].map((n) => ({
      attempt: n,
      endpoint: spent.endpoints[0]!,
      at: spent.firstAttemptAt + n * 1_000,
      outcome: 'retryable' as const,
      status: 500,
      latencyMs: 2,
    }));
    const clipped = retryState({ firstAttemptAt: Date.now() - 7_000, attempts: 3 }); // 4 s wait, clipped to ~1 s from now
    await producer.send(topics.retry, [retryMessage(spent), retryMessage(clipped)]);
    const letter = await waitUntil(
      () => dead().find((r) => r.headers[RETRY_HEADERS.messageId] === spent.messageId),
      10_000,
      'dead letter',
    );
    const state = retryStateFromHeaders(letter.headers);
    assert.equal(state.deadReason, 'window_exhausted');
    assert.ok(state.deadAt! >= spent.firstAttemptAt + 8_000);
    assert.deepEqual(state.history, spent.history);
    assert.equal(letter.value!.toString(), `{"messageId":"${spent.messageId}"}`);
    const forward = await waitUntil(
      () => redeliver().find((r) => r.headers[RETRY_HEADERS.messageId] === clipped.messageId),
      10_000,
      'clipped forward',
    );
    assert.equal(
      Number(forward.headers[RETRY_HEADERS.dueAt]),
      clipped.firstAttemptAt + 8_000,
      'due exactly at the window end',
    );
    assert.ok(!redeliver().some((r) => r.headers[RETRY_HEADERS.messageId] === spent.messageId));
  });

  it('sends a record with unreadable headers to sluice.rejected and keeps going', async () => {
    const good = retryState();
    await producer.send(topics.retry, [
      { key: 'k', value: 'body', headers: { [RETRY_HEADERS.messageId]: 'x' } },
      retryMessage(good),
    ]);
    const bad = await waitUntil(
      () => rejected().find((r) => r.value?.toString() === 'body'),
      10_000,
      'rejected record',
    );
    assert.equal(bad.headers[REJECT_HEADERS.origin], 'retry');
    assert.equal(bad.headers[REJECT_HEADERS.code], 'invalid_retry_headers');
    await waitUntil(
      () => redeliver().some((r) => r.headers[RETRY_HEADERS.messageId] === good.messageId),
      10_000,
      'the good record after it',
    );
  });

  it('exposes its metrics: forwards, lateness, no early forward, dead letters', async () => {
    const res = await fetch(`http://127.0.0.1:${service.port}/metrics`);
    const text = await res.text();
    assert.match(text, /sluice_retry_forwarded_total\{[^}]*\} [1-9]/);
    assert.match(text, /sluice_retry_lateness_seconds_count\{[^}]*\} [1-9]/);
    assert.match(text, /sluice_retry_early_total\{[^}]*\} 0\n/);
    assert.match(text, /sluice_retry_dead_letters_total\{reason="window_exhausted"[^}]*\} 1\n/);
    await sleep(0);
  });

  it("reports the intake's lag as sluice_consumer_lag and the delay tiers' as sluice_retry_backlog", async () => {
    const groupsOf = (text: string, metric: string) =>
      [...new Set([...text.matchAll(new RegExp(`^${metric}\\{[^}]*group="([^"]+)"`, 'gm'))].map((m) => m[1]!))].sort();
    const tiers = [1_000, 2_000, 4_000].map((ms) => tierGroupId(config, ms)).sort();
    let text = '';
    await waitUntil(
      async () => {
        text = await scrapeMetrics(service.port);
        return (
          groupsOf(text, 'sluice_retry_backlog').length === tiers.length &&
          groupsOf(text, 'sluice_consumer_lag').length === 1
        );
      },
      10_000,
      'lag and backlog of every group',
    );
    assert.deepEqual(groupsOf(text, 'sluice_consumer_lag'), [intakeGroupId(config)]);
    assert.deepEqual(groupsOf(text, 'sluice_retry_backlog'), tiers);
  });
});
