// A consumer that kafkajs crashes "without restart" because the broker went away keeps the process
// alive and runs again once Kafka is back: every record is handled, nothing is fatal, and the
// committed position is only what Kafka confirmed.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createLogger } from '@sluice/logging';
import { ConcurrentConsumer, createKafka, ensureTopics, SafeProducer, type Kafka } from '@sluice/kafka';
import { startLocalKafka, type LocalKafka } from '@sluice/local-kafka';
import { sleep, uniqueName, waitUntil } from '@sluice/testkit';

const logger = createLogger({ name: 'rerun-test', level: process.env.LOG_LEVEL === 'debug' ? 'debug' : 'silent' });
const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

async function produce(kafka: Kafka, topic: string, from: number, count: number): Promise<void> {
  const producer = new SafeProducer(kafka);
  await producer.connect();
  try {
    const values = Array.from({ length: count }, (_, i) => ({ value: String(from + i) }));
    await producer.send(topic, values);
  } finally {
    await producer.disconnect();
  }
}

async function committedTotal(kafka: Kafka, groupId: string, topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return offsets!.partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
  } finally {
    await admin.disconnect();
  }
}

describe('a consumer crashed by a broker outage runs again (crash-watch.ts)', () => {
  it('crash without restart during a broker stop: not fatal, every record handled after the broker returns', async () => {
    const broker: LocalKafka = await startLocalKafka({ log: () => undefined });
    cleanups.push(() => broker.dispose());
    // Few retries: kafkajs gives up (the crash this test is about) seconds after the broker goes.
    const kafka = createKafka({ brokers: [broker.brokers], clientId: 'rerun-test', logger, retries: 2 });
    const topic = uniqueName('rerun');
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [{ topic, numPartitions: 3, replicationFactor: 1 }]);
    await admin.disconnect();

    const handled = new Set<string>();
    const crashes: { name: string; restart: boolean; readyAfter: boolean }[] = [];
    let fatal: Error | undefined;
    const groupId = uniqueName('rerun-group');
    const consumer = new ConcurrentConsumer({
      kafka,
      groupId,
      topics: [topic],
      logger,
      maxInFlightPerPartition: 8,
      commitIntervalMs: 100,
      // Shrunk: the member lost in the crash leaves the group after 6 s, re-runs come every ≤ 2 s.
      membership: { sessionTimeoutMs: 6_000, rerunBackoff: { initialMs: 500, maxMs: 2_000 } },
      handle: async (record) => void handled.add(record.value!.toString()),
    });
    consumer.consumer.on(consumer.consumer.events.CRASH, (e) => {
      const { error, restart } = e.payload as { error: Error; restart: boolean };
      // Listeners run in order: the consumer's own crash watch has run by now.
      crashes.push({ name: error.name, restart, readyAfter: consumer.connected });
    });
    void consumer.fatal.then((err) => (fatal = err));
    await consumer.start();
    cleanups.push(() => consumer.close());

    await produce(kafka, topic, 0, 300);
    await waitUntil(() => handled.size === 300, 30_000, 'records before the outage');
    await waitUntil(
      async () => (await committedTotal(kafka, groupId, topic)) === 300,
      10_000,
      'commit before the outage',
    );

    await broker.stop();
    // Long enough for kafkajs to give up (its retries exhausted, or its re-join looking for the
    // coordinator while connections are refused): it crashes the consumer without restarting it.
    await waitUntil(() => crashes.some((c) => !c.restart), 60_000, 'a crash without restart').catch((err) => {
      throw new Error(`${(err as Error).message}; crashes: ${JSON.stringify(crashes)}`);
    });
    assert.ok(
      crashes.every((c) => !c.readyAfter),
      `not ready from the crash until it joined again: ${JSON.stringify(crashes)}`,
    );
    await sleep(2_000);
    await broker.restart();

    await produce(kafka, topic, 300, 300);
    await waitUntil(() => handled.size === 600, 90_000, `records after the outage (have ${handled.size})`);
    await waitUntil(() => consumer.connected, 30_000, 'ready again');
    await waitUntil(
      async () => (await committedTotal(kafka, groupId, topic)) === 600,
      30_000,
      'commits confirmed after the outage',
    );
    assert.equal(fatal, undefined, 'the crash was not fatal');
    assert.ok(
      crashes.some((c) => !c.restart),
      `saw a crash without restart: ${JSON.stringify(crashes)}`,
    );
  });
});
