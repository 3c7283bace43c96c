import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '@sluice/logging';
import {
  ConcurrentConsumer,
  ensureTopics,
  SafeProducer,
  SequentialConsumer,
  type Admin,
  type Kafka,
} from '@sluice/kafka';
import { uniqueName, waitUntil, testKafka } from '@sluice/testkit';
import { onePartitionTopic } from './fixtures/one-partition-topic.ts';

const logger = createLogger({ name: 'kafka-test', level: 'warn' });
let kafka: Kafka;

before(() => {
  kafka = testKafka({ clientId: 'kafka-test', logger });
});

/** Waits until group `groupId` has committed `offset` on partition 0 of `topic`. */
const waitForCommit = (admin: Admin, groupId: string, topic: string, offset: string) =>
  waitUntil(
    async () => (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]?.partitions[0]?.offset === offset,
    10_000,
    `commit to ${offset}`,
  );

describe('topics', () => {
  it('creates the missing topics with their configs once; a second run creates nothing', async () => {
    const plain = uniqueName('topic');
    const compacted = uniqueName('topic');
    const specs = [
      { topic: plain, numPartitions: 2, replicationFactor: 1 },
      {
        topic: compacted,
        numPartitions: 1,
        replicationFactor: 1,
        configEntries: [{ name: 'cleanup.policy', value: 'compact' }],
      },
    ];
    const admin = kafka.admin();
    await admin.connect();
    try {
      assert.deepEqual(await ensureTopics(admin, specs), [plain, compacted]);
      assert.deepEqual(await ensureTopics(admin, specs), []);
      const meta = await admin.fetchTopicMetadata({ topics: [plain] });
      assert.equal(meta.topics[0]?.partitions.length, 2);
      const described = await admin.describeConfigs({
        resources: [{ type: 2, name: compacted, configNames: ['cleanup.policy'] }],
        includeSynonyms: false,
      });
      assert.equal(described.resources[0]?.configEntries[0]?.configValue, 'compact');
    } finally {
      await admin.disconnect();
    }
  });
});

describe('producer preset and concurrent consumer against the real broker', () => {
  const topic = uniqueName('topic');
  const groupId = uniqueName('group');
  let producer: SafeProducer;

  before(async () => {
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [{ topic, numPartitions: 1, replicationFactor: 1 }]);
    await admin.disconnect();
    producer = new SafeProducer(kafka);
    await producer.connect();
  });
  after(() => producer.disconnect());

  it('handles records out of order, commits, and a restarted consumer resumes from the commit', async () => {
    await producer.send(
      topic,
      Array.from({ length: 40 }, (_, i) => ({ key: 'k', value: String(i) })),
    );
    const seen: number[] = [];
    const first = new ConcurrentConsumer({
      kafka,
      groupId,
      topics: [topic],
      logger,
      maxInFlightPerPartition: 10,
      handle: async (r) => {
        await new Promise((res) => setTimeout(res, Math.random() * 30)); // finish out of order
        seen.push(Number(r.value!.toString()));
      },
    });
    await first.start();
    await waitUntil(() => seen.length === 40, 20_000, '40 records');
    first.stopIntake();
    await first.drain(5_000);
    await first.close();
    assert.deepEqual(
      [...seen].sort((a, b) => a - b),
      Array.from({ length: 40 }, (_, i) => i),
    );

    const admin = kafka.admin();
    await admin.connect();
    const committed = await admin.fetchOffsets({ groupId, topics: [topic] });
    await admin.disconnect();
    assert.equal(committed[0]?.partitions[0]?.offset, '40');

    const resumed: number[] = [];
    const second = new ConcurrentConsumer({
      kafka,
      groupId,
      topics: [topic],
      logger,
      maxInFlightPerPartition: 10,
      handle: async (r) => void resumed.push(Number(r.value!.toString())),
    });
    await second.start();
    await producer.send(topic, [
      { key: 'k', value: '40' },
      { key: 'k', value: '41' },
    ]);
    await waitUntil(() => resumed.length >= 2, 20_000, 'resumed records');
    await new Promise((r) => setTimeout(r, 300));
    second.stopIntake();
    await second.close();
    assert.deepEqual(resumed, [40, 41]);
  });

  it('never commits past an unfinished record', async () => {
    const t = uniqueName('topic');
    const g = uniqueName('group');
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [{ topic: t, numPartitions: 1, replicationFactor: 1 }]);
    await producer.send(
      t,
      Array.from({ length: 5 }, (_, i) => ({ value: String(i) })),
    );
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    const done: number[] = [];
    const consumer = new ConcurrentConsumer({
      kafka,
      groupId: g,
      topics: [t],
      logger,
      maxInFlightPerPartition: 10,
      commitIntervalMs: 50,
      handle: async (r) => {
        const n = Number(r.value!.toString());
        if (n === 1) await blocked; // record 1 is slow; 2, 3, 4 finish first
        done.push(n);
      },
    });
    await consumer.start();
    await waitUntil(() => done.length === 4, 15_000, 'four fast records');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await admin.fetchOffsets({ groupId: g, topics: [t] }))[0]?.partitions[0]?.offset, '1');
    release();
    await waitForCommit(admin, g, t, '5');
    consumer.stopIntake();
    await consumer.close();
    await admin.disconnect();
  });
});

describe('concurrent consumer: crowding', () => {
  it('is crowded while a partition has half its slots or more taken, and says so when it becomes so', async () => {
    const { topic, producer } = await numberedTopic(2);
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    let told = 0;
    const handled: number[] = [];
    const consumer = new ConcurrentConsumer({
      kafka,
      groupId: uniqueName('group'),
      topics: [topic],
      logger,
      maxInFlightPerPartition: 6,
      onCrowded: () => (told += 1),
      handle: async (r) => {
        handled.push(Number(r.value!.toString()));
        await blocked;
      },
    });
    assert.equal(consumer.crowded, false);
    await consumer.start();
    await waitUntil(() => handled.length === 2, 15_000, 'two records in hand');
    assert.equal(consumer.crowded, false, 'two of six slots held');
    assert.equal(told, 0);
    await producer.send(topic, [{ value: '2' }]);
    await waitUntil(() => handled.length === 3, 10_000, 'a third record in hand');
    assert.equal(consumer.crowded, true, 'three of six slots held');
    assert.equal(told, 1);
    release();
    await waitUntil(() => consumer.crowded === false, 10_000, 'slots freed');
    consumer.stopIntake();
    await consumer.close();
    await producer.disconnect();
  });
});

/** A new one-partition topic holding records "0".."count-1", and a connected producer for more. */
async function numberedTopic(count: number): Promise<{ topic: string; producer: SafeProducer }> {
  const made = await onePartitionTopic(kafka, 'topic');
  await made.producer.send(
    made.topic,
    Array.from({ length: count }, (_, i) => ({ value: String(i) })),
  );
  return made;
}

describe('concurrent consumer: a failed commit is not forgotten', () => {
  it('commits the position after a failed commit even when no further record finishes', async () => {
    const { topic: t, producer } = await numberedTopic(3);
    await producer.disconnect();
    const g = uniqueName('group');
    const admin = kafka.admin();
    await admin.connect();
    const done: number[] = [];
    const consumer = new ConcurrentConsumer({
      kafka,
      groupId: g,
      topics: [t],
      logger,
      maxInFlightPerPartition: 10,
      commitIntervalMs: 50,
      handle: async (r) => void done.push(Number(r.value!.toString())),
    });
    // The broker refuses commits for a while (as during an outage or a rebalance).
    const realCommit = consumer.consumer.commitOffsets.bind(consumer.consumer);
    let refused = 0;
    let refuse = true;
    consumer.consumer.commitOffsets = async (offsets) => {
      if (refuse) {
        refused += 1;
        throw new Error('commit refused by the test');
      }
      return realCommit(offsets);
    };
    await consumer.start();
    await waitUntil(() => done.length === 3 && refused >= 2, 15_000, 'all records handled, commits refused');
    refuse = false;
    // No new record arrives: the earlier position must still reach Kafka.
    await waitForCommit(admin, g, t, '3');
    consumer.stopIntake();
    await consumer.close();
    await admin.disconnect();
  });
});

describe('concurrent consumer: no second hand-out after a re-fetch', () => {
  it('records already handed out are not handled again when kafkajs fetches from an older offset', async () => {
    const { topic: t, producer } = await numberedTopic(5);
    const handled: number[] = [];
    const consumer = new ConcurrentConsumer({
      kafka,
      groupId: uniqueName('group'),
      topics: [t],
      logger,
      maxInFlightPerPartition: 10,
      handle: async (r) => void handled.push(Number(r.value!.toString())),
    });
    await consumer.start();
    await waitUntil(() => handled.length === 5, 15_000, 'first five');
    // What a re-join does to the fetch position (kafkajs resumes from the committed offset): back to 0.
    consumer.consumer.seek({ topic: t, partition: 0, offset: '0' });
    await producer.send(t, [{ value: '5' }, { value: '6' }]);
    await waitUntil(() => handled.includes(6), 15_000, 'the two new records');
    await producer.disconnect();
    consumer.stopIntake();
    await consumer.close();
    assert.deepEqual(handled, [0, 1, 2, 3, 4, 5, 6]);
  });
});

describe('sequential consumer: waiting without sleeping in the handler', () => {
  it('holds a record until its due time, then takes it and the ones behind it', async () => {
    const t = uniqueName('topic');
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [{ topic: t, numPartitions: 1, replicationFactor: 1 }]);
    await admin.disconnect();
    const producer = new SafeProducer(kafka);
    await producer.connect();
    const start = Date.now();
    await producer.send(t, [{ value: String(start + 1_500) }, { value: String(start) }]);
    await producer.disconnect();
    const handled: { due: number; at: number }[] = [];
    const consumer = new SequentialConsumer({
      kafka,
      groupId: uniqueName('group'),
      topics: [t],
      logger,
      step: (r) => {
        const due = Number(r.value!.toString());
        if (Date.now() < due) return { kind: 'wait', untilMs: due };
        return { kind: 'go', run: async () => void handled.push({ due, at: Date.now() }) };
      },
    });
    await consumer.start();
    await waitUntil(() => handled.length === 2, 15_000, 'both records');
    consumer.stopIntake();
    await consumer.close();
    assert.ok(
      handled.every((h) => h.at >= h.due),
      'nothing handled early',
    );
    assert.equal(handled[0]!.due, start + 1_500, 'order kept: the head record first');
  });
});

describe('a crashed consumer makes the process exit', () => {
  it('exits non-zero instead of idling', async () => {
    const fixture = fileURLToPath(new URL('./fixtures/crashing-consumer.ts', import.meta.url));
    const child = spawn(process.execPath, [fixture], {
      env: { ...process.env, LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 1);
  });
});
