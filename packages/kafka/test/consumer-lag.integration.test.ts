// Consumer lag on the real broker: committed offset vs log end, read on an interval whether or not
// records arrive, and exported only for the partitions the member owns.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Registry } from 'prom-client';
import { createLogger } from '@sluice/logging';
import { ConcurrentConsumer, ConsumerMetrics, ensureTopics, SafeProducer, type Admin, type Kafka } from '@sluice/kafka';
import { uniqueName, waitUntil, testKafka } from '@sluice/testkit';

const INTERVAL_MS = 1_000;
const logger = createLogger({ name: 'lag-test', level: 'warn' });
const topic = uniqueName('lag');
const groupId = uniqueName('lag-group');
let kafka: Kafka;
let admin: Admin;
let producer: SafeProducer;

before(async () => {
  kafka = testKafka({ clientId: 'lag-test', logger });
  admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [{ topic, numPartitions: 2, replicationFactor: 1 }]);
  producer = new SafeProducer(kafka);
  await producer.connect();
});
after(async () => {
  await producer.disconnect();
  await admin.disconnect();
});

/** A member of the group with its own registry (as one pod), whose handler can be held. */
function member() {
  const registry = new Registry();
  const lag = new ConsumerMetrics(registry, { admin, intervalMs: INTERVAL_MS, logger });
  let release: () => void = () => {};
  let held: Promise<void> | undefined;
  let handled = 0;
  const consumer = new ConcurrentConsumer({
    kafka,
    groupId,
    topics: [topic],
    logger,
    maxInFlightPerPartition: 10,
    metrics: lag,
    handle: async () => {
      await held;
      handled++;
    },
  });
  return {
    consumer,
    lag,
    get handled() {
      return handled;
    },
    hold: () => void (held = new Promise<void>((resolve) => (release = resolve))),
    release: () => {
      held = undefined;
      release();
    },
    /** `partition → lag` this member exports for the group. */
    series: async () => {
      const values = (await lag.lag.get()).values.filter((v) => v.labels.group === groupId && v.labels.topic === topic);
      return new Map(values.map((v) => [Number(v.labels.partition), v.value]));
    },
    close: async () => {
      consumer.stopIntake();
      await consumer.drain(5_000);
      await consumer.close();
      lag.close();
    },
  };
}

const total = (series: Map<number, number>) => [...series.values()].reduce((a, b) => a + b, 0);

it('a stalled member shows the true lag within one interval, 0 once it catches up; a moved partition leaves the old member', async () => {
  const a = member();
  await a.consumer.start();
  await waitUntil(async () => (await a.series()).size === 2, 15_000, 'member A exports both partitions');
  assert.equal(total(await a.series()), 0);

  // Stalled: records arrive but no handler finishes, so nothing is committed.
  a.hold();
  await producer.send(
    topic,
    Array.from({ length: 1_000 }, (_, i) => ({ key: `user-${i}`, value: String(i) })),
  );
  const producedAt = Date.now();
  await waitUntil(async () => total(await a.series()) === 1_000, 10_000, 'lag 1000');
  const seenAfterMs = Date.now() - producedAt;
  assert.ok(seenAfterMs <= INTERVAL_MS + 1_500, `lag 1000 seen after ${seenAfterMs} ms (interval ${INTERVAL_MS} ms)`);
  assert.ok(a.handled === 0);

  a.release();
  await waitUntil(async () => a.handled === 1_000 && total(await a.series()) === 0, 20_000, 'lag back to 0');

  // A second member joins: each partition belongs to one member, and only that member exports it.
  const b = member();
  await b.consumer.start();
  await waitUntil(
    async () => {
      const [ofA, ofB] = [await a.series(), await b.series()];
      return ofA.size === 1 && ofB.size === 1 && [...ofA.keys()][0] !== [...ofB.keys()][0];
    },
    30_000,
    'the partitions split between the members',
  );
  const [ofA, ofB] = [await a.series(), await b.series()];
  assert.deepEqual([...ofA.keys(), ...ofB.keys()].sort(), [0, 1]);
  // What each member exports is what Kafka assigned to it.
  const groups = await admin.describeGroups([groupId]);
  assert.equal(groups.groups[0]?.members.length, 2);

  // B leaves: A owns both again and exports both; B exports nothing.
  await b.close();
  await waitUntil(async () => (await a.series()).size === 2, 30_000, 'member A owns both partitions again');
  assert.equal((await b.series()).size, 0);
  await a.close();
  assert.equal((await a.series()).size, 0);
});
