import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SluiceConfig } from '@sluice/config';
import type { EventEnvelope } from '@sluice/envelope';
import { createRetry, type RetryService } from '@sluice/retry';
import {
  createTestTopics,
  receivedEnvelope,
  startReceiver,
  testConfig,
  testKafka,
  testServiceContext,
  waitUntil,
  type Receiver,
} from '@sluice/testkit';
import type { Kafka } from 'kafkajs';
import { createDeliverer, type DelivererService } from '../src/index.ts';
import { produceEvents } from './kafka-helpers.ts';

// Per-user order with batching and a filter on the same destination (docs/reference/ordering.md):
// a batch carries at most one event of a user, a user's next event goes only after its previous
// one's batch was answered, an event the receiver's per-event result fails becomes its user's head
// (the user's later events wait for its retry), and an event the filter refuses never blocks.

describe('per-user order with batched delivery and a filter', () => {
  let config: SluiceConfig;
  let kafka: Kafka;
  let deliverer: DelivererService;
  let retry: RetryService;
  let receiver: Receiver;
  /** Per message id: when the receiver first accepted it (the order a de-duplicating receiver applied). */
  const applied: { id: string; at: number }[] = [];
  const firstTry = new Map<string, number>();
  const batches: string[][] = [];
  let failedOnce = false;

  before(async () => {
    receiver = await startReceiver({
      behaviour: (req) => {
        const body = JSON.parse(req.body.toString()) as { messageIds: string[] };
        batches.push(body.messageIds);
        const failed: { messageId: string; status: number; error: string }[] = [];
        for (const id of body.messageIds) {
          if (!firstTry.has(id)) firstTry.set(id, req.at);
          if (id === 'x-0' && !failedOnce) {
            failedOnce = true;
            failed.push({ messageId: id, status: 503, error: 'busy' });
          } else if (!applied.some((a) => a.id === id)) applied.push({ id, at: req.at });
        }
        return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ failed }) };
      },
    });
    config = testConfig({
      sources: [{ id: 's1', writeKeys: ['k1'] }],
      destinations: [
        {
          id: 'ordb',
          type: 'webhooks',
          sourceIds: ['s1'],
          ordering: 'per-user',
          batch: { maxEvents: 10, maxWait: '50ms' },
          filter: { events: ['keep'] },
          settings: { webhooks: [{ url: receiver.url }] },
        },
      ],
      delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
      retry: { window: '30s', schedule: ['1s'], jitter: 0, tiers: ['1s'] },
    });
    kafka = testKafka({ clientId: 'deliverer-ordering-batch-test' });
    await createTestTopics(kafka, config);
    retry = await createRetry(testServiceContext('retry', config), { port: 0 }).start();
    deliverer = await createDeliverer(testServiceContext('deliverer', config), {
      port: 0,
      drainTimeoutMs: 5_000,
    }).start();
    // Users x and y, six events each, interleaved; x-2 and y-2 are refused by the filter.
    const events: EventEnvelope[] = [];
    for (let i = 0; i < 6; i++)
      for (const user of ['x', 'y'])
        events.push(
          receivedEnvelope({
            sourceId: 's1',
            messageId: `${user}-${i}`,
            userId: user,
            event: i === 2 ? 'skip' : 'keep',
          }),
        );
    await produceEvents(kafka, config.kafka.topics.events, events);
  });

  after(async () => {
    await deliverer?.close();
    await retry?.close();
    await receiver?.close();
  });

  const order = (user: string) => applied.filter((a) => a.id.startsWith(`${user}-`)).map((a) => a.id);

  it('each user in acceptance order, one event of a user per batch, the failed event first, the filtered never attempted', async () => {
    await waitUntil(() => order('x').length === 5 && order('y').length === 5, 20_000, 'both users delivered');
    assert.deepEqual(order('x'), ['x-0', 'x-1', 'x-3', 'x-4', 'x-5']);
    assert.deepEqual(order('y'), ['y-0', 'y-1', 'y-3', 'y-4', 'y-5']);
    assert.ok(!firstTry.has('x-2') && !firstTry.has('y-2'), 'the filtered events were never sent');
    for (const ids of batches)
      for (const user of ['x', 'y'])
        assert.ok(ids.filter((id) => id.startsWith(`${user}-`)).length <= 1, `one event of ${user} per batch: ${ids}`);
    // x-1 waited for its head: first tried only once x-0 had come back through the retry path.
    const headAt = applied.find((a) => a.id === 'x-0')!.at;
    assert.ok(firstTry.get('x-1')! >= headAt, 'x-1 was not sent before x-0 was delivered');
    // y was not held behind x's head: all of y went before x-0's retry.
    const lastY = Math.max(...applied.filter((a) => a.id.startsWith('y-')).map((a) => a.at));
    assert.ok(lastY < headAt, "y's events did not wait for x's head");
  });
});
