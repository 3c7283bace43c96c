import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '@sluice/logging';
import { createKafka, GrowingConsumer, type Kafka } from '@sluice/kafka';
import { testBrokers, uniqueName, waitUntil } from '@sluice/testkit';
import { onePartitionTopic } from './fixtures/one-partition-topic.ts';

// A consumer whose topic list grows while it runs (the deliverer's parked and events groups), on
// the real broker: a topic added is read through a new generation of the group.

const logger = createLogger({ name: 'kafka-test', level: 'warn' });
let kafka: Kafka;

before(() => {
  kafka = createKafka({ brokers: testBrokers(), clientId: 'kafka-test', logger });
});

describe('GrowingConsumer', () => {
  const stops: (() => Promise<void>)[] = [];
  after(async () => {
    for (const stop of stops) await stop();
  });

  it('a topic added is read by a new generation; the one that left is told it owns nothing, and a record it had not finished is read again', async () => {
    const first = await onePartitionTopic(kafka, 'growing-a');
    const second = await onePartitionTopic(kafka, 'growing-b');
    stops.push(
      () => first.producer.disconnect(),
      () => second.producer.disconnect(),
    );
    const handled: string[] = [];
    const assignments: Record<string, number[]>[] = [];
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const consumer = new GrowingConsumer({
      kafka,
      groupId: uniqueName('growing'),
      topics: [first.topic],
      logger,
      maxInFlightPerPartition: 4,
      commitIntervalMs: 50,
      // Shrunk: record `held` is still in its handler when the drain ends.
      swapDrainMs: 300,
      onAssigned: (a) => assignments.push(a),
      handle: async (r) => {
        const value = r.value!.toString();
        handled.push(value);
        if (value === 'held') await gate;
      },
    });
    stops.push(async () => {
      openGate();
      consumer.stopIntake();
      await consumer.drain(5_000);
      await consumer.close();
    });
    await consumer.start();
    await first.producer.send(first.topic, [{ key: 'k', value: 'done' }]);
    await first.producer.send(first.topic, [{ key: 'k', value: 'held' }]);
    await waitUntil(() => handled.includes('held'), 15_000, 'both records of the first topic handed out');

    consumer.add(second.topic);
    consumer.add(second.topic); // known: no second change
    assert.deepEqual(consumer.topics, [first.topic, second.topic]);
    await second.producer.send(second.topic, [{ key: 'k', value: 'later' }]);
    await waitUntil(() => handled.includes('later'), 30_000, 'the added topic read');
    // The record unfinished when the first generation left (uncommitted) is read again by the next.
    await waitUntil(() => handled.filter((v) => v === 'held').length === 2, 15_000, "'held' read again");
    assert.deepEqual(
      handled.filter((v) => v === 'done'),
      ['done'],
      'a finished record is committed before the change, not read again',
    );
    assert.deepEqual(assignments, [{ [first.topic]: [0] }, {}, { [first.topic]: [0], [second.topic]: [0] }]);
    assert.equal(consumer.connected, true);
  });
});
