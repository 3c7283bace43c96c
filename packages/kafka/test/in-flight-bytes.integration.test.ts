import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { before, describe, it } from 'node:test';
import { createLogger } from '@sluice/logging';
import { ConcurrentConsumer, createKafka, type Kafka } from '@sluice/kafka';
import { testBrokers, uniqueName, waitUntil } from '@sluice/testkit';
import { onePartitionTopic } from './fixtures/one-partition-topic.ts';

const logger = createLogger({ name: 'kafka-test', level: 'warn' });
let kafka: Kafka;

before(() => {
  kafka = createKafka({ brokers: testBrokers(), clientId: 'kafka-test', logger });
});

describe('concurrent consumer: bytes in flight', () => {
  it('hands out records while their bytes fit under maxInFlightBytes, and one larger record alone', async () => {
    const { topic, producer } = await onePartitionTopic(kafka, 'bytes');
    await producer.send(
      topic,
      Array.from({ length: 8 }, (_, i) => ({ key: 'k', value: `${i}`.padEnd(999, '.') })),
    );
    await producer.send(topic, [{ key: 'k', value: 'big'.padEnd(9_999, '.') }]);
    const releases: { value: string; release: () => void }[] = [];
    const releaseWhere = (keep: (value: string) => boolean) => {
      for (const r of releases.filter((r) => !keep(r.value))) r.release();
      releases.splice(0, releases.length, ...releases.filter((r) => keep(r.value)));
    };
    const handled: string[] = [];
    const consumer = new ConcurrentConsumer({
      kafka,
      groupId: uniqueName('group'),
      topics: [topic],
      logger,
      maxInFlightPerPartition: 100,
      maxInFlightBytes: 3_000,
      handle: async (r) => {
        const value = r.value!.toString().replace(/\.+$/, '');
        handled.push(value);
        await new Promise<void>((release) => releases.push({ value, release }));
      },
    });
    await consumer.start();
    try {
      // Key (1 byte) + value (999 bytes): three records fill 3,000 bytes.
      await waitUntil(() => handled.length === 3, 15_000, 'three records in hand');
      await sleep(500);
      assert.equal(handled.length, 3, 'a fourth record would pass 3,000 bytes');
      assert.equal(consumer.inFlightBytes, 3_000);
      releases.shift()!.release();
      await waitUntil(() => handled.length === 4, 10_000, 'a fourth record once one finished');
      assert.equal(consumer.inFlightBytes, 3_000);
      // Release the small ones as they come: the 10 KB record passes once nothing else is in flight.
      const drain = setInterval(() => releaseWhere((v) => v === 'big'), 20);
      await waitUntil(() => handled.includes('big'), 10_000, 'the large record, alone');
      clearInterval(drain);
      assert.equal(consumer.inFlightBytes, 10_000);
      assert.equal(consumer.inFlight, 1);
      releaseWhere(() => false);
      await waitUntil(() => consumer.inFlightBytes === 0, 10_000, 'nothing in flight');
      assert.deepEqual(handled, ['0', '1', '2', '3', '4', '5', '6', '7', 'big']);
    } finally {
      consumer.stopIntake();
      await consumer.close();
      await producer.disconnect();
    }
  });
});
