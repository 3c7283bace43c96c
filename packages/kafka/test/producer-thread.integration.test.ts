import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createLogger } from '@sluice/logging';
import { ensureTopics, ProducerThread, ProducerThreadError, type Kafka } from '@sluice/kafka';
import { testBrokers, uniqueName, waitUntil, testKafka } from '@sluice/testkit';

// The producer thread both ingest and the deliverer write through, against the real broker.
const logger = createLogger({ name: 'producer-thread-test', level: 'warn' });
const topic = uniqueName('producer-thread');
let kafka: Kafka;
let thread: ProducerThread;

before(async () => {
  kafka = testKafka({ clientId: uniqueName('pt'), logger });
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [{ topic, numPartitions: 2, replicationFactor: 1 }]);
  await admin.disconnect();
  thread = await ProducerThread.start({
    service: 'producer-thread-test',
    brokers: testBrokers(),
    clientId: uniqueName('pt'),
    logLevel: 'warn',
    producers: 2,
  });
});

after(async () => {
  await thread?.disconnect();
});

it('writes key/value batches (packed) and records with headers (cloned) byte for byte; resolves only after the ack', async () => {
  assert.equal(thread.connected, true);
  const plain = Array.from({ length: 500 }, (_, i) => ({
    key: `k-${i % 7}`,
    value: Buffer.from(JSON.stringify({ i, text: 'é€😀' })),
  }));
  await thread.sendBatch([{ topic, messages: plain }]);
  await thread.sendBatch([
    {
      topic,
      messages: [
        { key: null, value: 'with headers', headers: { 'sluice-a': Buffer.from([0, 1, 2]), 'sluice-b': 'text' } },
      ],
    },
  ]);

  const consumer = kafka.consumer({ groupId: uniqueName('pt-read') });
  const seen: { key: string | null; value: string; headers: Record<string, string> }[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const headers = Object.fromEntries(
        Object.entries(message.headers ?? {}).map(([k, v]) => [k, (v as Buffer).toString('hex')]),
      );
      seen.push({ key: message.key?.toString() ?? null, value: message.value!.toString(), headers });
    },
  });
  try {
    await waitUntil(async () => seen.length >= 501, 30_000, 'all records read back');
  } finally {
    await consumer.disconnect();
  }
  const byValue = new Map(seen.map((s) => [s.value, s]));
  for (const m of plain) assert.equal(byValue.get(m.value.toString())?.key, m.key);
  assert.deepEqual(byValue.get('with headers'), {
    key: null,
    value: 'with headers',
    headers: { 'sluice-a': '000102', 'sluice-b': Buffer.from('text').toString('hex') },
  });
});

it('a batch the broker refuses rejects with ProducerThreadError, and the thread keeps working', async () => {
  const tooLarge = Buffer.alloc(2_000_000, 1); // above the broker's default 1 MB message limit
  await assert.rejects(
    thread.sendBatch([{ topic, messages: [{ key: 'big', value: tooLarge }] }]),
    (err: Error) => err instanceof ProducerThreadError,
  );
  await thread.sendBatch([{ topic, messages: [{ key: 'after', value: 'still writing' }] }]);
});

it('after disconnect, sends reject at once and `died` stays pending (a requested stop is not a death)', async () => {
  const other = await ProducerThread.start({
    service: 'producer-thread-test',
    brokers: testBrokers(),
    clientId: uniqueName('pt'),
    logLevel: 'warn',
    producers: 1,
  });
  await other.disconnect();
  assert.equal(other.connected, false);
  await assert.rejects(other.sendBatch([{ topic, messages: [{ key: 'x', value: 'y' }] }]));
  const settled = await Promise.race([
    other.died.then(() => 'died'),
    new Promise((r) => setTimeout(() => r('pending'), 200)),
  ]);
  assert.equal(settled, 'pending');
});
