// Starts one real broker for the whole file (this package tests the broker itself, so it does
// not use KAFKA_BROKERS).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { processExists } from '@sluice/local-runtime';
import { KAFKA_VERSION, startLocalKafka, type LocalKafka } from '../src/index.ts';

const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

async function consumeAll(kafka: Kafka, topic: string, groupId: string, expected: number): Promise<string[]> {
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1_000 });
  const values: string[] = [];
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`consumed ${values.length}/${expected} from ${topic}`)), 30_000);
      void consumer
        .run({
          eachMessage: async ({ message }) => {
            values.push(message.value?.toString() ?? '');
            if (values.length >= expected) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect(); // commits the offsets consumed so far
  }
  return values;
}

describe(`local Kafka ${KAFKA_VERSION}`, { timeout: 180_000 }, () => {
  let broker: LocalKafka;
  let kafka: Kafka;
  let producer: Producer;
  const topic = unique('local-kafka-test');
  const groupId = unique('local-kafka-group');
  const sent = Array.from({ length: 20 }, (_, i) => `event-${i}`);

  before(async () => {
    broker = await startLocalKafka();
    kafka = new Kafka({ clientId: 'local-kafka-test', brokers: [broker.brokers], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true });
    await admin.disconnect();
    producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
  });

  after(async () => {
    await producer?.disconnect().catch(() => {});
    await broker?.dispose();
  });

  test('is a KRaft broker on 127.0.0.1 that refuses to auto-create topics', async () => {
    assert.match(broker.brokers, /^127\.0\.0\.1:\d+$/);
    assert.equal(broker.brokers, `127.0.0.1:${broker.port}`);
    assert.ok(processExists(broker.pid), 'JVM is running');
    assert.ok(broker.startupMs > 0 && broker.startupMs < 60_000);
    const admin = kafka.admin();
    await admin.connect();
    try {
      const cluster = await admin.describeCluster();
      assert.equal(cluster.brokers.length, 1);
      assert.equal(cluster.clusterId, broker.clusterId);
      const missing = unique('never-created');
      await assert.rejects(admin.fetchTopicMetadata({ topics: [missing] }));
      assert.ok(!(await admin.listTopics()).includes(missing));
    } finally {
      await admin.disconnect();
    }
  });

  test('idempotent producer (acks=-1) and consumer group round trip', async () => {
    await producer.send({ topic, acks: -1, messages: sent.map((value, i) => ({ key: `k${i % 5}`, value })) });
    const received = await consumeAll(kafka, topic, groupId, sent.length);
    assert.deepEqual([...received].sort(), [...sent].sort());
  });

  test('restart() keeps data, committed offsets and the address', async () => {
    const before = { pid: broker.pid, brokers: broker.brokers, clusterId: broker.clusterId };
    await broker.stop();
    assert.equal(broker.running, false);
    assert.equal(processExists(before.pid), false, 'old JVM is gone after stop()');

    await broker.restart();
    assert.equal(broker.running, true);
    assert.notEqual(broker.pid, before.pid);
    assert.equal(broker.brokers, before.brokers);
    assert.equal(broker.clusterId, before.clusterId);

    // Records written before the stop are still there.
    const again = await consumeAll(kafka, topic, unique('after-restart'), sent.length);
    assert.deepEqual([...again].sort(), [...sent].sort());

    // So are the first group's committed offsets.
    const admin = kafka.admin();
    await admin.connect();
    try {
      const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
      const committed = offsets!.partitions.reduce((sum, p) => sum + Number(p.offset), 0);
      assert.equal(committed, sent.length);
    } finally {
      await admin.disconnect();
    }

    // The producer created before the stop works against the restarted broker.
    await producer.send({ topic, acks: -1, messages: [{ value: 'after-restart' }] });
    const tail = await consumeAll(kafka, topic, groupId, 1);
    assert.deepEqual(tail, ['after-restart']);
  });

  test('stop() leaves no JVM and dispose() removes the temp dir', async () => {
    await producer.disconnect();
    const pid = broker.pid;
    assert.ok(existsSync(broker.dir));
    await broker.stop();
    assert.equal(processExists(pid), false, `JVM ${pid} still exists after stop()`);
    assert.ok(existsSync(broker.dir), 'stop() keeps the temp dir (for restart)');
    await broker.dispose();
    assert.equal(existsSync(broker.dir), false, 'dispose() removes the temp dir');
    await broker.dispose(); // idempotent
  });
});
