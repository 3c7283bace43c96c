import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { SluiceConfig } from '@sluice/config';
import { createRetry, type RetryService } from '@sluice/retry';
import {
  createTestTopics,
  metric,
  scrapeMetrics,
  receivedEnvelope,
  startReceiver,
  testConfig,
  testKafka,
  testServiceContext,
  waitUntil,
  type ReceivedRequest,
  type Reply,
} from '@sluice/testkit';
import type { Kafka } from 'kafkajs';
import { createDeliverer, type DelivererService } from '../src/index.ts';
import { produceEvents } from './kafka-helpers.ts';

// A user held by its head for long, with many events waiting on the waiting topic: once the head
// is delivered, the queue drains in order at the receiver's pace, not at the pace of records going
// round the waiting topic (docs/reference/ordering.md, "Cost and limits").

/** Events the held user sends behind its head. */
const WAITING = 300;
/**
 * The released queue drains at least this fast (events a second) on a shared, loaded 2-core machine
 * (12–60 events/s measured beside a drill at load 24; idle, far more). Records going round the
 * waiting topic per event drained well under 1 a second.
 */
const MIN_DRAIN_PER_S = 5;

let config: SluiceConfig;
let kafka: Kafka;
let deliverer: DelivererService | undefined;
let retry: RetryService | undefined;
let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
let held = true;
/** The first 2xx per message id, and when. */
const applied: string[] = [];
const appliedAt: number[] = [];

before(async () => {
  receiver = await startReceiver({
    behaviour: (req: ReceivedRequest): Reply => {
      const id = String(req.headers['x-message-id']);
      if (held && id.startsWith('held-')) return { status: 503 };
      if (!applied.includes(id)) {
        applied.push(id);
        appliedAt.push(Date.now());
      }
      return { status: 200 };
    },
  });
  config = testConfig({
    sources: [{ id: 's1', writeKeys: ['k1'] }],
    destinations: [
      {
        id: 'ord',
        type: 'webhooks',
        sourceIds: ['s1'],
        ordering: 'per-user',
        settings: { webhooks: [{ url: receiver.url }] },
      },
    ],
    retry: { window: '30m', schedule: ['1s'], jitter: 0, tiers: ['1s'] },
    // The head's retries open the circuit: for 1 s, not 30, so that it goes soon after the release.
    delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] }, circuitBreaker: { cooldown: '1s' } },
  });
  kafka = testKafka({ clientId: 'deliverer-ordering-drain-test' });
  await createTestTopics(kafka, config);
  retry = await createRetry(testServiceContext('retry', config), { port: 0 }).start();
  deliverer = await createDeliverer(testServiceContext('deliverer', config), {
    port: 0,
    drainTimeoutMs: 5_000,
  }).start();
});

after(async () => {
  await deliverer?.close();
  await retry?.close();
  await receiver?.close();
});

it(`a head held while ${WAITING} events of its user wait: once it is delivered, they all go in order at ≥ ${MIN_DRAIN_PER_S} events/s`, async () => {
  const sourceId = 's1';
  const ids = Array.from({ length: WAITING + 1 }, (_, i) => `held-${i}`);
  await produceEvents(
    kafka,
    config.kafka.topics.events,
    ids.map((messageId) => receivedEnvelope({ sourceId, messageId, userId: 'held', event: 'e' })),
  );
  let waiting = 0;
  await waitUntil(
    async () => (waiting = await metric(deliverer!.port, 'sluice_deliverer_ordering_waiting_total')) >= WAITING,
    120_000,
    () => `every later event waiting behind the head (${waiting} of ${WAITING})`,
  );
  // Held a while longer: the waiting records read and waiting in memory for their turn, as under a long outage.
  const inMemory = async () =>
    Number(
      /^sluice_deliverer_ordering_waits\{kind="turn_in_memory"[^}]*\} (\S+)$/m.exec(
        await scrapeMetrics(deliverer!.port),
      )?.[1] ?? 0,
    );
  await waitUntil(async () => (await inMemory()) >= WAITING, 60_000, 'the waiting records waiting in memory');
  assert.equal(applied.length, 0, 'nothing delivered while the head is held');
  held = false;
  await waitUntil(
    () => applied.length === ids.length,
    120_000,
    () => `every event delivered after the release (${applied.length} of ${ids.length})`,
  );
  // From the head's delivery (its retry's timing is the retry path's) to the last event's.
  const seconds = (appliedAt.at(-1)! - appliedAt[0]!) / 1000;
  const rate = WAITING / seconds;
  const cycled = await metric(deliverer!.port, 'sluice_deliverer_ordering_cycled_total');
  console.log(
    `drained ${WAITING} waiting events in ${seconds.toFixed(1)} s after the head (${rate.toFixed(0)} events/s); records written again in all ${cycled}`,
  );
  assert.deepEqual(applied, ids, 'in acceptance order');
  assert.ok(rate >= MIN_DRAIN_PER_S, `drained at ${rate.toFixed(0)} events/s (bound ${MIN_DRAIN_PER_S})`);
});
