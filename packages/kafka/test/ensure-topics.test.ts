// ensureTopics against a fake admin: which creation requests it makes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Admin, ensureTopics, type TopicSpec } from '@sluice/kafka';

/** An admin that knows `existing` topics, records each createTopics request, and places every topic at once. */
function fakeAdmin(existing: string[]) {
  const topics = new Set(existing);
  const requests: string[][] = [];
  const admin = {
    listTopics: async () => [...topics],
    createTopics: async ({ topics: created }: { topics: { topic: string }[] }) => {
      requests.push(created.map((t) => t.topic));
      for (const t of created) topics.add(t.topic);
      return true;
    },
    fetchTopicMetadata: async ({ topics: asked }: { topics: string[] }) => ({
      topics: asked.map((name) => ({ name, partitions: [{ partitionId: 0, leader: 1 }] })),
    }),
    fetchTopicOffsets: async () => [{ partition: 0, offset: '0', high: '0', low: '0' }],
  };
  return { admin: admin as unknown as Admin, requests };
}

const once = async <T>(_operation: string, call: () => Promise<T>) => call();

/** A parked topic as topicSpecs gives it: 1 partition and one config entry, 3 controller records. */
const parked = (i: number, partitions = 1): TopicSpec => ({
  topic: `sluice.parked.d${i}`,
  numPartitions: partitions,
  replicationFactor: 1,
  configEntries: [{ name: 'retention.ms', value: '-1' }],
});

test('10,000 missing topics are created in requests of at most 5,000 controller records each, every one of them', async () => {
  const { admin, requests } = fakeAdmin(['sluice.events']);
  const specs = [
    { topic: 'sluice.events', numPartitions: 6, replicationFactor: 1 },
    ...Array.from({ length: 10_000 }, (_, i) => parked(i)),
  ];
  const created = await ensureTopics(admin, specs, { retry: once });
  assert.equal(created.length, 10_000);
  // 3 records a topic (the topic, its partition, its config entry): 1,666 topics a request.
  assert.deepEqual(
    requests.map((r) => r.length),
    [1_666, 1_666, 1_666, 1_666, 1_666, 1_666, 4],
  );
  assert.deepEqual(requests.flat(), created, 'each missing topic once, in order');
});

test('partitions count: 6-partition topics with one config entry are 8 records each; a few topics are one request', async () => {
  const { admin, requests } = fakeAdmin([]);
  await ensureTopics(
    admin,
    Array.from({ length: 1_300 }, (_, i) => parked(i, 6)),
    { retry: once },
  );
  assert.deepEqual(
    requests.map((r) => r.length),
    [625, 625, 50],
  );
  const few = fakeAdmin([]);
  await ensureTopics(few.admin, [parked(1), parked(2)], { retry: once });
  assert.deepEqual(few.requests, [['sluice.parked.d1', 'sluice.parked.d2']]);
});

test('a topic larger than one request is created alone; nothing missing, no request', async () => {
  const { admin, requests } = fakeAdmin([]);
  const huge: TopicSpec = { topic: 'huge', numPartitions: 6_000, replicationFactor: 1 };
  await ensureTopics(admin, [parked(1), huge, parked(2)], { retry: once });
  assert.deepEqual(requests, [['sluice.parked.d1'], ['huge'], ['sluice.parked.d2']]);
  const none = fakeAdmin(['sluice.parked.d1']);
  assert.deepEqual(await ensureTopics(none.admin, [parked(1)], { retry: once }), []);
  assert.deepEqual(none.requests, []);
});
