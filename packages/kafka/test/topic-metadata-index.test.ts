import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '@sluice/logging';
import { createKafka } from '../src/kafka-client.ts';
import { clusterClasses, fixTopicMetadataLookups } from '../src/topic-metadata-index.ts';

interface Pool {
  metadata: { topicMetadata: { topic: string; partitionMetadata: unknown[] }[] } | null;
  metadataExpireAt: number | null;
  refreshMetadata(topics: string[]): Promise<unknown>;
  refreshMetadataIfNecessary(topics: string[]): Promise<unknown>;
}

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** A kafkajs BrokerPool (never connected) whose refreshes are counted instead of sent. */
function pool(): Pool & { refreshes: string[][] } {
  const { BrokerPool } = clusterClasses();
  const p = new BrokerPool({
    connectionPoolBuilder: {},
    logger: { namespace: () => silent },
    retry: {},
  }) as unknown as Pool & { refreshes: string[][] };
  p.refreshes = [];
  p.refreshMetadata = async (topics) => void p.refreshes.push(topics);
  return p;
}

/** A kafkajs Cluster's lookup, on a given pool (the method reads only `this.brokerPool`). */
function findIn(p: Pool, topic: string): unknown[] {
  const { Cluster } = clusterClasses();
  return (
    Cluster.prototype as unknown as { findTopicPartitionMetadata(t: string): unknown[] }
  ).findTopicPartitionMetadata.call({ brokerPool: p }, topic);
}

const metadataOf = (...topics: string[]) => ({
  topicMetadata: topics.map((topic, i) => ({ topic, partitionMetadata: [{ partitionId: 0, leader: i }] })),
});

test('createKafka applies the topic-metadata lookup fix (kafkajs still has the shape it patches)', () => {
  createKafka({
    brokers: ['127.0.0.1:9092'],
    clientId: 'test',
    logger: createLogger({ name: 'test', level: 'silent' }),
  });
  assert.equal(fixTopicMetadataLookups(), true);
});

test("a topic's partitions are found in the metadata, the first of its name; an unknown topic has none", () => {
  fixTopicMetadataLookups();
  const p = pool();
  p.metadata = metadataOf('a', 'b', 'a');
  assert.deepEqual(findIn(p, 'b'), [{ partitionId: 0, leader: 1 }]);
  assert.deepEqual(findIn(p, 'a'), [{ partitionId: 0, leader: 0 }]);
  assert.deepEqual(findIn(p, 'c'), []);
  // A refresh replaces the metadata: the next lookup reads the new one.
  p.metadata = metadataOf('c');
  assert.deepEqual(findIn(p, 'c'), [{ partitionId: 0, leader: 0 }]);
  assert.deepEqual(findIn(p, 'a'), []);
});

test('without metadata the lookup throws as kafkajs does', () => {
  fixTopicMetadataLookups();
  assert.throws(() => findIn(pool(), 'a'), { name: 'KafkaJSTopicMetadataNotLoaded' });
});

test('metadata is refreshed when missing, expired, or without one of the topics, and only then', async () => {
  fixTopicMetadataLookups();
  const p = pool();
  await p.refreshMetadataIfNecessary(['a']);
  assert.deepEqual(p.refreshes, [['a']], 'no metadata yet');
  p.metadata = metadataOf('a', 'b');
  p.metadataExpireAt = Date.now() + 60_000;
  await p.refreshMetadataIfNecessary(['a', 'b']);
  assert.equal(p.refreshes.length, 1, 'every topic known and fresh: no refresh');
  await p.refreshMetadataIfNecessary(['a', 'c']);
  assert.deepEqual(p.refreshes.at(-1), ['a', 'c'], 'a topic it does not know');
  p.metadataExpireAt = Date.now() - 1;
  await p.refreshMetadataIfNecessary(['a']);
  assert.equal(p.refreshes.length, 3, 'expired');
});

test('10,000 known topics checked and looked up one by one read each metadata entry once, not a scan per topic', async () => {
  fixTopicMetadataLookups();
  const p = pool();
  const topics = Array.from({ length: 10_000 }, (_, i) => `sluice.parked.d${i}`);
  // The metadata's topic list, counting the entries read from it.
  let reads = 0;
  const list = new Proxy(metadataOf(...topics).topicMetadata, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads += 1;
      return Reflect.get(target, key, receiver);
    },
  });
  p.metadata = { topicMetadata: list };
  p.metadataExpireAt = Date.now() + 60_000;
  await p.refreshMetadataIfNecessary(topics);
  for (const topic of topics) assert.equal(findIn(p, topic).length, 1);
  assert.equal(p.refreshes.length, 0);
  // Scanning reads 50 million entries for the check and as many for the lookups.
  assert.equal(reads, 10_000);
});
