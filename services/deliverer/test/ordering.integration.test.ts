import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SluiceConfig } from '@sluice/config';
import { recordKey, RETRY_HEADERS, type EventEnvelope } from '@sluice/envelope';
import { createRetry, type RetryService } from '@sluice/retry';
import {
  createTestTopics,
  metric,
  receivedEnvelope,
  testConfig,
  testKafka,
  testServiceContext,
  waitUntil,
  watchTopics,
  type TopicWatcher,
} from '@sluice/testkit';
import { waitingTopicName } from '@sluice/topology';
import type { Kafka } from 'kafkajs';
import { createDeliverer, type DelivererService } from '../src/index.ts';
import { partitionOfKey, produceEvents } from './kafka-helpers.ts';
import { appliedOf, orderedReceiver } from './ordered-receiver.ts';

// Per-user order on the real broker (docs/reference/ordering.md): the in-process deliverer and
// retry service with shrunk retry tiers, real receivers. Every receiver records the order in which
// it first answered 2xx per message id — what a receiver de-duplicating on X-Message-Id applied.

const RETRY_DELAY_MS = 1_000;
const shrunk = { window: '8s', schedule: ['1s'], jitter: 0, tiers: ['1s'] };

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/** A user id whose key lands in the same partition as `other`'s (of `partitions`). */
function userBeside(sourceId: string, other: string, partitions: number): string {
  const partitionOf = (userId: string) => partitionOfKey(`${sourceId}:${userId}`, partitions);
  for (let i = 0; ; i++) if (partitionOf(`b${i}`) === partitionOf(other)) return `b${i}`;
}

describe('per-user order on the real broker', () => {
  let config: SluiceConfig;
  let kafka: Kafka;
  let deliverer: DelivererService;
  let retry: RetryService;
  let seen: TopicWatcher;
  let waitingSeen: TopicWatcher | undefined;
  /** The records of `ord`'s waiting topic (created by its first wait, in the first test: watched from then on). */
  const waitingRecords = async () => {
    const topic = waitingTopicName(config, 'ord');
    waitingSeen ??= await watchTopics(kafka, [topic]);
    return waitingSeen.records(topic);
  };
  let release: Awaited<ReturnType<typeof orderedReceiver>>;
  let deadWaiting: Awaited<ReturnType<typeof orderedReceiver>>;
  let allowF = false;
  let allowG = false;
  const startDeliverer = () =>
    createDeliverer(testServiceContext('deliverer', config), {
      port: 0,
      drainTimeoutMs: 5_000,
      waitingTrimIntervalMs: 500,
    }).start();
  const events = (sourceId: string, userId: string, prefix: string, n: number): EventEnvelope[] =>
    ids(prefix, n).map((messageId) => receivedEnvelope({ sourceId, messageId, userId, event: 'e' }));
  const sentAt = new Map<string, number>();

  before(async () => {
    release = await orderedReceiver(
      (id, n) => (id === 'a-0' && n === 1) || id === 'c-0' || (id === 'f-0' && !allowF) || (id === 'g-0' && !allowG),
    );
    deadWaiting = await orderedReceiver((id) => id === 'e-0');
    config = testConfig({
      sources: [
        { id: 's1', writeKeys: ['k1'] },
        { id: 's2', writeKeys: ['k2'] },
      ],
      destinations: [
        {
          id: 'ord',
          type: 'webhooks',
          sourceIds: ['s1'],
          ordering: 'per-user',
          settings: { webhooks: [{ url: release.receiver.url }] },
        },
        {
          id: 'dlw',
          type: 'webhooks',
          sourceIds: ['s2'],
          ordering: 'per-user',
          orderingOnDeadLetter: 'dead-letter-waiting',
          settings: { webhooks: [{ url: deadWaiting.receiver.url }] },
        },
      ],
      delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
      retry: shrunk,
    });
    kafka = testKafka({ clientId: 'deliverer-ordering-test' });
    await createTestTopics(kafka, config);
    retry = await createRetry(testServiceContext('retry', config), { port: 0 }).start();
    deliverer = await startDeliverer();
    seen = await watchTopics(kafka, [config.kafka.topics.deadLetter]);
    const b = userBeside('s1', 'a', config.kafka.partitions);
    const interleaved: EventEnvelope[] = [];
    const [as, bs] = [events('s1', 'a', 'a-', 5), events('s1', b, 'b-', 10)];
    for (let i = 0; i < 10; i++) interleaved.push(...(as[i] ? [as[i]!] : []), bs[i]!);
    // The users whose head is dead-lettered by the retry service (window spent, ~8 s): sent now,
    // so their window runs during the first test.
    interleaved.push(...events('s1', 'c', 'c-', 3), ...events('s2', 'e', 'e-', 3));
    for (const e of interleaved) sentAt.set(e.messageId, Date.now());
    await produceEvents(kafka, config.kafka.topics.events, interleaved);
  });

  after(async () => {
    await deliverer?.close();
    await retry?.close();
    await seen?.stop();
    await waitingSeen?.stop();
    await Promise.all([release?.receiver.close(), deadWaiting?.receiver.close()]);
  });

  it("a user whose head gets 503 then 200: its later events arrive after the head, in order; another user's events of the same partition are not delayed", async () => {
    await waitUntil(() => appliedOf(release.applied, 'a-').length === 5, 15_000, "user a's five events");
    assert.deepEqual(appliedOf(release.applied, 'a-'), ids('a-', 5), 'in acceptance order, the retried head first');
    const headFailedAt = release.firstTry.get('a-0')!;
    const headAppliedAt = release.applied.find((x) => x.id === 'a-0')!.at;
    assert.ok(headAppliedAt - headFailedAt >= RETRY_DELAY_MS * 0.9, 'the head came back through the retry path');
    for (const id of ids('a-', 5).slice(1))
      assert.ok(release.firstTry.get(id)! >= headAppliedAt, `${id} was not attempted before the head was delivered`);
    await waitUntil(() => appliedOf(release.applied, 'b-').length === 10, 10_000, "user b's ten events");
    assert.deepEqual(appliedOf(release.applied, 'b-'), ids('b-', 10));
    const lastB = Math.max(...release.applied.filter((x) => x.id.startsWith('b-')).map((x) => x.at));
    // Not held behind a's head: all of b was applied before the head's retry was (a retry is ≥ 1 s
    // after its failure; b's events need milliseconds, a loaded machine stretches both alike).
    assert.ok(
      lastB < headAppliedAt,
      `user b (same partition) all delivered ${lastB - headFailedAt} ms after a's head failed, before its retry (${headAppliedAt - headFailedAt} ms)`,
    );
    assert.equal(await metric(deliverer.port, 'sluice_deliverer_ordering_waiting_total'), 4 + 2 + 2);
  });

  it('a head dead-lettered by the retry service releases its queue (release), or takes the waiting events with it (dead-letter-waiting)', async () => {
    await waitUntil(() => appliedOf(release.applied, 'c-').length === 2, 30_000, "user c's later events released");
    assert.deepEqual(appliedOf(release.applied, 'c-'), ['c-1', 'c-2']);
    const deadIds = () => seen.records(config.kafka.topics.deadLetter).map((r) => r.headers[RETRY_HEADERS.messageId]);
    await waitUntil(
      () => ['e-0', 'e-1', 'e-2'].every((id) => deadIds().includes(id)),
      10_000,
      "user e's three dead letters",
    );
    assert.ok(deadIds().includes('c-0'));
    const waitingDead = seen
      .records(config.kafka.topics.deadLetter)
      .find((r) => r.headers[RETRY_HEADERS.messageId] === 'e-1')!;
    assert.match(String(waitingDead.headers[RETRY_HEADERS.lastError]), /waited for, e-0/);
    assert.equal(deadWaiting.tries.get('e-1'), undefined, 'the waiting events were never attempted');
    assert.equal(deadWaiting.tries.get('e-2'), undefined);
    const cDeadAt = seen
      .records(config.kafka.topics.deadLetter)
      .find((r) => r.headers[RETRY_HEADERS.messageId] === 'c-0')!.at;
    assert.ok(release.firstTry.get('c-1')! >= cDeadAt - 50, 'c-1 went only after its head was dead-lettered');
  });

  it('a restart mid-queue keeps the queue (read again from sluice.ordering and the waiting topic) and its order', async () => {
    const fs = events('s1', 'f', 'f-', 4);
    await produceEvents(kafka, config.kafka.topics.events, fs);
    const waiting = async () => (await waitingRecords()).filter((r) => r.key === recordKey(fs[0]!)).length;
    await waitUntil(async () => (await waiting()) >= 3, 10_000, "user f's three events waiting");
    await deliverer.close();
    deliverer = await startDeliverer();
    allowF = true;
    await waitUntil(() => appliedOf(release.applied, 'f-').length === 4, 20_000, "user f's four events");
    assert.deepEqual(appliedOf(release.applied, 'f-'), ids('f-', 4));
  });

  it('two deliverers sharing the group: one owns each partition of every topic; the queue survives the hand-over when one leaves', async () => {
    const second = await startDeliverer();
    try {
      const gs = events('s1', 'g', 'g-', 4);
      const hs = events('s1', 'h', 'h-', 4);
      await produceEvents(kafka, config.kafka.topics.events, [...gs, ...hs]);
      const waiting = async () => (await waitingRecords()).filter((r) => r.key === recordKey(gs[0]!)).length;
      await waitUntil(async () => (await waiting()) >= 3, 20_000, "user g's three events waiting");
      await waitUntil(() => appliedOf(release.applied, 'h-').length === 4, 10_000, "user h's events");
      assert.deepEqual(appliedOf(release.applied, 'h-'), ids('h-', 4));
    } finally {
      await second.close();
    }
    allowG = true;
    await waitUntil(() => appliedOf(release.applied, 'g-').length === 4, 20_000, "user g's four events");
    assert.deepEqual(appliedOf(release.applied, 'g-'), ids('g-', 4));
    // Consumed waiting records are deleted (the topic keeps records until then).
    const admin = kafka.admin();
    await admin.connect();
    try {
      await waitUntil(
        async () => {
          const offsets = await admin.fetchTopicOffsets(waitingTopicName(config, 'ord'));
          return offsets.some((p) => Number(p.low) > 0) && offsets.every((p) => p.low === p.high);
        },
        10_000,
        'the consumed waiting records deleted',
      );
    } finally {
      await admin.disconnect();
    }
  });
});
