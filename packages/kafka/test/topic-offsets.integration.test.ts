// topicOffsets on the real broker: the offsets of many topics in a few requests, not a metadata
// refresh per topic (kafkajs's fetchTopicOffsets), and the same answers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Admin, ensureTopics, type Kafka, SafeProducer, topicOffsets } from '@sluice/kafka';
import { testKafka, uniqueName } from '@sluice/testkit';

const TOPICS = 300;

describe('topicOffsets', () => {
  let kafka: Kafka;
  let admin: Admin;
  const topics = Array.from({ length: TOPICS }, () => uniqueName('offsets'));

  before(async () => {
    kafka = testKafka({ clientId: 'topic-offsets-test' });
    const setup = kafka.admin();
    await setup.connect();
    await ensureTopics(
      setup,
      topics.map((topic) => ({ topic, numPartitions: 2, replicationFactor: 1 })),
    );
    await setup.disconnect();
    const producer = new SafeProducer(kafka);
    await producer.connect();
    // Topic i gets i % 4 records on partition 1.
    for (const [i, topic] of topics.entries())
      if (i % 4 > 0)
        await producer.send(
          topic,
          Array.from({ length: i % 4 }, (_, n) => ({ partition: 1, value: `v${n}` })),
        );
    await producer.disconnect();
    admin = kafka.admin();
    await admin.connect();
  });

  after(async () => {
    await admin?.disconnect();
  });

  it(`asks the offsets of ${TOPICS} topics in one metadata request (asked once more after a retriable answer) and one ListOffsets request per bound, with kafkajs's answers`, async () => {
    const requests = new Map<string, number>();
    const stop = admin.on(admin.events.REQUEST, (e) =>
      requests.set(e.payload.apiName, (requests.get(e.payload.apiName) ?? 0) + 1),
    );
    const offsets = await topicOffsets(admin, topics);
    stop();
    // One, and on a loaded machine sometimes two: seen as two whole answers over one connection
    // 20 ms apart, kafkajs asking again (its retrier or its refresh check). What this bounds is a
    // request per topic (300).
    const metadata = requests.get('Metadata') ?? 0;
    assert.ok(metadata >= 1 && metadata <= 2, JSON.stringify([...requests]));
    assert.equal(requests.get('ListOffsets'), 2, 'low and high, one request each on the one broker');
    assert.equal(offsets.size, TOPICS);
    for (const [i, topic] of topics.entries()) {
      const got = offsets.get(topic)!.sort((a, b) => a.partition - b.partition);
      assert.deepEqual(got, [
        { partition: 0, low: '0', high: '0' },
        { partition: 1, low: '0', high: String(i % 4) },
      ]);
    }
    // The same as kafkajs's per-topic call, for a few of them.
    for (const topic of topics.slice(0, 4)) {
      const theirs = (await admin.fetchTopicOffsets(topic)).map(({ partition, low, high }) => ({
        partition,
        low,
        high,
      }));
      assert.deepEqual(
        theirs.sort((a, b) => a.partition - b.partition),
        offsets.get(topic)!.sort((a, b) => a.partition - b.partition),
      );
    }
  });

  it('asked again about 50 of them: at most one metadata request, never one per topic', async () => {
    let metadata = 0;
    const stop = admin.on(admin.events.REQUEST, (e) => {
      if (e.payload.apiName === 'Metadata') metadata += 1;
    });
    const offsets = await topicOffsets(admin, topics.slice(0, 50));
    stop();
    assert.ok(metadata <= 1, `${metadata} metadata requests`);
    assert.equal(offsets.size, 50);
  });
});
