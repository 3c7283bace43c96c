import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ensureTopics, type RecordSink } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { testKafka, uniqueName, waitUntil } from '@sluice/testkit';
import type { Admin, Kafka, Producer } from 'kafkajs';
import { OrderingStore } from '../src/ordering/ordering-store.ts';
import { parked, type QueueState } from '../src/ordering/queue-rules.ts';
import { QueueStates } from '../src/ordering/queue-states.ts';

// The ordering state store over a real broker (docs/reference/ordering.md, "State"): a partition
// given up and assigned again is read up to the topic's end before it is this process's again;
// the records it wrote itself meanwhile are not read back over the newer states it holds.

let kafka: Kafka;
let admin: Admin;
let producer: Producer;
const logger = createLogger({ name: 'ordering-store-test', level: 'warn' });

before(async () => {
  kafka = testKafka({ clientId: 'ordering-store-test' });
  admin = kafka.admin();
  await admin.connect();
  producer = kafka.producer();
  await producer.connect();
});

after(async () => {
  await producer.disconnect();
  await admin.disconnect();
});

it('a partition assigned again keeps the queue this process holds: its own records read back meanwhile do not set it back', async () => {
  const topic = uniqueName('ordering');
  // Through the services' own creation, which waits out a topic not placed yet.
  await ensureTopics(admin, [
    { topic, numPartitions: 1, replicationFactor: 1, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] },
  ]);
  // Writes go to Kafka at once, but the third waits for `release`.
  let sends = 0;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const sink: RecordSink = {
    send: async (t, message) => {
      if (++sends === 3) await released;
      await producer.send({ topic: t, messages: [message] });
    },
  };
  const store = new OrderingStore({
    kafka,
    admin,
    sink,
    topic: () => topic,
    logger,
    groupPrefix: uniqueName('ordering-store'),
    states: new QueueStates(1 << 20),
  });
  await store.start();
  try {
    store.assigned([0]);
    await store.ready(0);
    const queue = { destinationId: 'ord', key: 's:u', partition: 0 };
    const park = (n: number) => {
      const q: QueueState = parked(store.get('ord', 's:u'), { messageId: `m-${n}`, bytes: 1, epoch: 'e1' }).state;
      return store.put(queue, q);
    };
    await park(1);
    // Given up (a rebalance); meanwhile two changes: the third is made while the second is on its
    // way to Kafka (so the second is read back after it), and stays on its way.
    store.assigned([]);
    const second = park(2);
    await waitUntil(() => sends === 2, 5_000, 'the second change on its way');
    const third = park(3);
    const newest = store.get('ord', 's:u');
    assert.equal(newest?.next, 3);
    await second;
    // Assigned again: read up to the end (the second record) before it is this process's.
    store.assigned([0]);
    await store.ready(0);
    assert.deepEqual(
      store.get('ord', 's:u'),
      newest,
      'the queue as this process last set it, not as its own second record says',
    );
    release();
    await third;
    assert.equal(sends, 3);
    assert.deepEqual(store.get('ord', 's:u'), newest);
  } finally {
    await store.close();
  }
});
