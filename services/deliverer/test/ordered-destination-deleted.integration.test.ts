import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { SluiceConfig } from '@sluice/config';
import { RETRY_HEADERS, readOrderingRelease, retryStateFromHeaders } from '@sluice/envelope';
import type { Kafka } from '@sluice/kafka';
import { createRetry, type RetryService } from '@sluice/retry';
import {
  createTestTopics,
  metric,
  type Receiver,
  receivedEnvelope,
  startReceiver,
  type TopicWatcher,
  testConfig,
  testKafka,
  testServiceContext,
  uniqueName,
  waitForCatalogApplied,
  waitUntil,
  watchTopics,
  startTestCatalog,
  type TestCatalog,
} from '@sluice/testkit';
import { createDeliverer, type DelivererService } from '../src/index.ts';
import { produceEvents } from './kafka-helpers.ts';

// The head of a user's queue of an ordered runtime destination, dead-lettered by the retry service
// once the destination is gone (docs/reference/ordering.md, "Interplay"), on the real broker: the
// in-process deliverer and retry service, a real receiver. The head's second attempt is in flight
// when the destination is deleted; it fails after the window's end, so the retry service
// dead-letters it — `destination_deleted` — and writes the release marker; the deliverer releases the
// queue (its state no longer waits for the head), and the user's waiting events are dead-lettered
// `destination_deleted` well within their idle wait (30 s), none attempted.

/** The window: the head's second attempt, held by the receiver, answers after it. */
const WINDOW_MS = 3_000;
/** How long the receiver holds the head's second attempt (within `delivery.timeout`). */
const HOLD_MS = 5_000;
/** The followers leave well before their idle wait (30 s) would have ended it. */
const FOLLOWERS_LIMIT_MS = 15_000;

describe('an ordered runtime destination deleted while the head of a user’s queue is in the retry path', () => {
  const keyVariable = uniqueName('SLUICE_TEST_KEYRING').replaceAll(/[^A-Za-z0-9_]/g, '_');
  let hook: Receiver;
  let config: SluiceConfig;
  let kafka: Kafka;
  let catalog: TestCatalog;
  let deliverer: DelivererService;
  let retry: RetryService;
  let seen: TopicWatcher;
  const by = () => ({ by: 'operator', at: Date.now() });
  const triesOf = (messageId: string) => hook.requests.filter((q) => q.headers['x-message-id'] === messageId);
  const deadOf = (messageId: string) =>
    seen
      .records(config.kafka.topics.deadLetter)
      .filter((r) => r.headers[RETRY_HEADERS.messageId] === messageId)
      .map((r) => retryStateFromHeaders(r.headers));
  /** Until both services have read the catalog as far as the writer's reader has. */
  const applied = () =>
    Promise.all([deliverer.port, retry.port].map((base) => waitForCatalogApplied(catalog.reader, { base })));

  before(async () => {
    process.env[keyVariable] = randomBytes(32).toString('hex');
    // The head fails; its second attempt is held past the window's end, then fails too.
    hook = await startReceiver({
      behaviour: (req) =>
        req.headers['x-message-id'] === 'head' && triesOf('head').length === 2
          ? { status: 500, delayMs: HOLD_MS }
          : { status: 500 },
    });
    config = testConfig({
      sources: [{ id: 's', writeKeys: ['k'] }],
      destinations: [],
      delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] }, timeout: '20s' },
      retry: { window: `${WINDOW_MS}ms`, schedule: ['500ms'], jitter: 0, tiers: ['1s'] },
      runtimeDestinations: { keyring: [{ id: 'k1', key: { env: keyVariable } }] },
    });
    kafka = testKafka({ clientId: 'deliverer-ordered-destination-deleted-test' });
    await createTestTopics(kafka, config);
    catalog = await startTestCatalog(kafka, config);
    // Ordered from the deliverer's start: in force before it.
    const created = await catalog.writer.create({
      ...by(),
      definition: {
        id: 'crm',
        type: 'webhooks',
        sourceIds: ['s'],
        ordering: 'per-user',
        orderingOnDeadLetter: 'dead-letter-waiting',
        settings: { webhooks: [{ url: hook.url }] },
      },
    });
    assert.equal(created.kind, 'created', JSON.stringify(created));
    retry = await createRetry(testServiceContext('retry', config), { port: 0 }).start();
    deliverer = await createDeliverer(testServiceContext('deliverer', config), { port: 0 }).start();
    seen = await watchTopics(kafka, [
      config.kafka.topics.deadLetter,
      config.kafka.topics.redeliver,
      config.kafka.topics.ordering,
    ]);
  });

  after(async () => {
    await deliverer?.close();
    await retry?.close();
    await Promise.all([seen?.stop(), catalog?.close(), hook?.close()]);
    delete process.env[keyVariable];
  });

  it('the retry service dead-letters the head destination_deleted and releases the queue: its waiting events are dead-lettered too, never attempted', async () => {
    const send = (messageId: string) =>
      produceEvents(kafka, config.kafka.topics.events, [receivedEnvelope({ sourceId: 's', messageId, userId: 'u' })]);
    await send('head');
    await waitUntil(() => triesOf('head').length === 1, 30_000, 'the head attempted once');
    // Sent once the head failed: they wait behind it on the waiting topic.
    for (const id of ['w-1', 'w-2']) await send(id);
    await waitUntil(
      async () => (await metric(deliverer.port, 'sluice_deliverer_ordering_waiting_total')) === 2,
      30_000,
      'both waiting behind the head',
    );
    // The head's second attempt is in flight (held by the receiver) when the deletion is read.
    await waitUntil(() => triesOf('head').length === 2, 30_000, "the head's second attempt");
    const deleted = await catalog.writer.delete({ ...by(), id: 'crm', expectedVersion: 1 });
    assert.equal(deleted.kind, 'deleted', JSON.stringify(deleted));
    await applied();
    assert.equal(triesOf('head').length, 2, 'the deletion was read while the second attempt was in flight');

    await waitUntil(() => deadOf('head').length > 0, 30_000, 'the head dead-lettered by the retry service');
    const [head] = deadOf('head');
    assert.deepEqual(
      [head!.deadReason, head!.lastError, head!.attempts],
      ['destination_deleted', 'destination crm is gone', 2],
    );
    assert.equal(await metric(retry.port, 'sluice_retry_dead_letters_total'), 1);
    const marker = () =>
      seen
        .records(config.kafka.topics.redeliver)
        .map((r) => readOrderingRelease(r.headers))
        .find((m) => m !== undefined);
    await waitUntil(() => marker() !== undefined, 15_000, 'the release marker written after the dead letter');
    assert.deepEqual(marker(), { destinationId: 'crm', messageId: 'head' });

    await waitUntil(
      () => deadOf('w-1').length > 0 && deadOf('w-2').length > 0,
      FOLLOWERS_LIMIT_MS,
      'the waiting events dead-lettered',
    );
    for (const id of ['w-1', 'w-2']) {
      assert.deepEqual(
        [deadOf(id)[0]!.deadReason, deadOf(id)[0]!.lastError],
        ['destination_deleted', 'destination crm is gone'],
      );
      assert.equal(triesOf(id).length, 0, `${id} never attempted`);
    }
    // The queue no longer waits for the head (released: its state without one, or gone), so nothing
    // waits for it should the id be created again.
    const queueState = () => {
      const last = seen.records(config.kafka.topics.ordering).findLast((r) => r.key === 'crm/s:u');
      return last && (last.value === null ? null : (JSON.parse(last.value.toString()) as { head?: string }));
    };
    await waitUntil(
      () => queueState() === null || (queueState() !== undefined && queueState()!.head === undefined),
      FOLLOWERS_LIMIT_MS,
      "the user's queue released",
    );
  });
});
