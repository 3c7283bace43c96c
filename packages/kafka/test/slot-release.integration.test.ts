import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '@sluice/logging';
import { ConcurrentConsumer, createKafka, type Admin, type Kafka, type RecordSlot } from '@sluice/kafka';
import { testBrokers, uniqueName, waitUntil } from '@sluice/testkit';
import { onePartitionTopic } from './fixtures/one-partition-topic.ts';

const logger = createLogger({ name: 'kafka-test', level: 'warn' });
let kafka: Kafka;
let admin: Admin;

before(async () => {
  kafka = createKafka({ brokers: testBrokers(), clientId: 'kafka-test', logger });
  admin = kafka.admin();
  await admin.connect();
});
after(() => admin.disconnect());

/**
 * One slot per partition; record 0's handler waits on a gate, releasing its slot first when
 * `releaseFirst`. Returns what was handled and the committed offset as it goes.
 */
async function oneSlot(releaseFirst: boolean) {
  const { topic, producer } = await onePartitionTopic(kafka, 'slot');
  await producer.send(
    topic,
    Array.from({ length: 3 }, (_, i) => ({ key: 'k', value: `${i}`.padEnd(100, '.') })),
  );
  const groupId = uniqueName('group');
  let openGate!: () => void;
  const gate = new Promise<void>((resolve) => (openGate = resolve));
  const handled: string[] = [];
  const consumer = new ConcurrentConsumer({
    kafka,
    groupId,
    topics: [topic],
    logger,
    maxInFlightPerPartition: 1,
    maxInFlightBytes: 150,
    commitIntervalMs: 50,
    handle: async (r, slot: RecordSlot) => {
      const value = r.value!.toString().replace(/\.+$/, '');
      handled.push(value);
      if (value !== '0') return;
      if (releaseFirst) {
        slot.release();
        slot.release(); // idempotent: a second call frees nothing more
      }
      await gate;
    },
  });
  const committed = async () =>
    (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]?.partitions[0]?.offset ?? '-1';
  const stop = async () => {
    consumer.stopIntake();
    await consumer.close();
    await producer.disconnect();
  };
  return { consumer, handled, openGate, committed, stop };
}

describe('concurrent consumer: a handler releases its slot', () => {
  it('the next records are handed out while the released one waits, and nothing is committed past it', async () => {
    const c = await oneSlot(true);
    await c.consumer.start();
    try {
      await waitUntil(() => c.handled.length === 3, 15_000, 'records 1 and 2 while 0 waits');
      assert.equal(c.consumer.inFlightBytes, 0);
      assert.equal(c.consumer.detachedBytes, 101, 'key + value of record 0');
      // What sluice_consumer_records_in_hand and sluice_consumer_partition_paused read.
      assert.deepEqual(
        c.consumer.partitionSlots().map(({ inSlot, detached, paused }) => ({ inSlot, detached, paused })),
        [{ inSlot: 0, detached: 1, paused: undefined }],
        'record 0 waits with its slot given back; the partition is read on',
      );
      await sleep(300); // several commit intervals: still nothing past record 0
      assert.ok(Number(await c.committed()) <= 0, 'committed below the unfinished record');
      c.openGate();
      await waitUntil(async () => (await c.committed()) === '3', 10_000, 'committed past all three');
      assert.equal(c.consumer.detachedBytes, 0);
    } finally {
      await c.stop();
    }
  });

  it('without the release, the slot stays taken until the handler ends', async () => {
    const c = await oneSlot(false);
    await c.consumer.start();
    try {
      await waitUntil(() => c.handled.length === 1, 15_000, 'record 0');
      await sleep(500);
      assert.deepEqual(c.handled, ['0'], 'records 1 and 2 wait for the slot');
      assert.equal(c.consumer.inFlightBytes, 101);
      c.openGate();
      await waitUntil(() => c.handled.length === 3, 10_000, 'records 1 and 2 once 0 ended');
    } finally {
      await c.stop();
    }
  });
});

describe('concurrent consumer: a partition with every slot taken', () => {
  it('holds back neither another partition nor another topic of the same broker, and reads on once slots free', async () => {
    const full = await onePartitionTopic(kafka, 'full');
    const other = await onePartitionTopic(kafka, 'other');
    await full.producer.send(
      full.topic,
      Array.from({ length: 6 }, (_, i) => ({ key: 'k', value: `f${i}` })),
    );
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const handled: string[] = [];
    const consumer = new ConcurrentConsumer({
      kafka,
      groupId: uniqueName('group'),
      topics: [full.topic, other.topic],
      logger,
      maxInFlightPerPartition: 2,
      commitIntervalMs: 50,
      handle: async (r) => {
        const value = r.value!.toString();
        handled.push(value);
        // The full topic's records wait (as records waiting for another's outcome in their slots do).
        if (value.startsWith('f')) await gate;
      },
    });
    await consumer.start();
    try {
      await waitUntil(() => handled.length === 2, 15_000, 'the full partition takes its two slots');
      // Records of the other topic written after the full partition filled up still go at once.
      for (let i = 0; i < 3; i++) {
        await other.producer.send(other.topic, [{ key: 'k', value: `o${i}` }]);
        await waitUntil(() => handled.includes(`o${i}`), 10_000, `o${i} while the full partition waits`);
      }
      assert.deepEqual(
        handled.filter((v) => v.startsWith('f')),
        ['f0', 'f1'],
        'nothing more of the full partition meanwhile',
      );
      // What sluice_consumer_records_in_hand and sluice_consumer_partition_paused read: the full
      // partition paused for its slots, what it holds and what it keeps of its batch.
      const slots = consumer.partitionSlots();
      const fullSlots = slots.find((p) => p.topic === full.topic)!;
      assert.equal(fullSlots.paused, 'slots');
      assert.equal(fullSlots.inSlot, 2);
      assert.equal(fullSlots.detached, 0);
      assert.ok(fullSlots.kept <= 4, `${fullSlots.kept} records kept`);
      assert.equal(slots.find((p) => p.topic === other.topic)?.paused, undefined, 'the other topic is read');
      openGate();
      await waitUntil(() => handled.filter((v) => v.startsWith('f')).length === 6, 15_000, 'the rest once slots free');
    } finally {
      consumer.stopIntake();
      await consumer.close();
      await full.producer.disconnect();
      await other.producer.disconnect();
    }
  });

  it('hands out the rest of its batch as slots free, instead of fetching the partition again for each', async () => {
    const records = 200;
    const { topic, producer } = await onePartitionTopic(kafka, 'rest');
    await producer.send(
      topic,
      Array.from({ length: records }, (_, i) => ({ key: 'k', value: `r${i}` })),
    );
    // Each handler waits for its own gate; the test opens them one at a time, in order, as a
    // user's queue moves one event at a time while the events behind it wait in their slots.
    const gates: (() => void)[] = [];
    const handled: string[] = [];
    const consumer = new ConcurrentConsumer({
      kafka,
      groupId: uniqueName('group'),
      topics: [topic],
      logger,
      maxInFlightPerPartition: 4,
      commitIntervalMs: 50,
      handle: async (r) => {
        handled.push(r.value!.toString());
        await new Promise<void>((resolve) => gates.push(resolve));
      },
    });
    let fetched = 0;
    consumer.consumer.on(consumer.consumer.events.START_BATCH_PROCESS, (e) => {
      fetched += e.payload.batchSize;
    });
    await consumer.start();
    try {
      for (let i = 0; i < records; i++) {
        await waitUntil(() => gates.length > i, 15_000, `record ${i} handed out`);
        gates[i]!();
      }
      assert.deepEqual(
        handled,
        Array.from({ length: records }, (_, i) => `r${i}`),
        'every record once, in order',
      );
      // Fetching the partition again for each freed slot reads ~records²/2 records (the rest of
      // the batch each time, all but one dropped); keeping the rest reads each about once.
      assert.ok(fetched <= 2 * records, `${fetched} records fetched to hand out ${records}`);
    } finally {
      consumer.stopIntake();
      await consumer.close();
      await producer.disconnect();
    }
  });
});
