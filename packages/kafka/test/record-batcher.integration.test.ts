import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Registry } from 'prom-client';
import { createLogger } from '@sluice/logging';
import type { TopicMessages } from 'kafkajs';
import { ensureTopics, ProducerThread, RecordBatcher, SideRecordRefusedError, type Kafka } from '@sluice/kafka';
import { metricSum, readTopic, sleep, testBrokers, testKafka, uniqueName } from '@sluice/testkit';

// The deliverer's side-record path against the real broker: RecordBatcher on a ProducerThread.
const logger = createLogger({ name: 'record-batcher-test', level: 'warn' });
const topics = [uniqueName('attempts'), uniqueName('retry')];
/** A topic that takes record batches of at most 50 kB (`max.message.bytes`). */
const smallTopic = uniqueName('small');
const SMALL_LIMIT = 50_000;
let kafka: Kafka;
let thread: ProducerThread;

before(async () => {
  kafka = testKafka({ clientId: uniqueName('rb'), logger });
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [
    ...topics.map((topic) => ({ topic, numPartitions: 6, replicationFactor: 1 })),
    {
      topic: smallTopic,
      numPartitions: 3,
      replicationFactor: 1,
      configEntries: [{ name: 'max.message.bytes', value: String(SMALL_LIMIT) }],
    },
  ]);
  await admin.disconnect();
  thread = await ProducerThread.start({
    service: 'record-batcher-test',
    brokers: testBrokers(),
    clientId: uniqueName('rb'),
    logLevel: 'warn',
    producers: 1,
  });
});

after(async () => {
  await thread?.disconnect();
});

async function recordsIn(topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high), 0);
  } finally {
    await admin.disconnect();
  }
}

it('20,000 records arriving at ~20,000/s leave in few large batches (one per 10 ms interval) and every send resolves once written', async () => {
  const registry = new Registry();
  const starts: number[] = [];
  const producer = { sendBatch: (batch: TopicMessages[]) => (starts.push(Date.now()), thread.sendBatch(batch)) };
  const batcher = new RecordBatcher(producer, { lingerMs: 2, sendIntervalMs: 10, logger, registry });
  const sends: Promise<void>[] = [];
  const started = performance.now();
  // 20 records every millisecond or so, as from handlers finishing one after another.
  for (let tick = 0; tick < 1_000; tick++) {
    for (let i = 0; i < 20; i++) {
      const n = tick * 20 + i;
      const message = { key: `user-${n % 997}`, value: JSON.stringify({ messageId: `m-${n}`, attempt: 1 }) };
      sends.push(batcher.send(topics[n % 10 === 0 ? 1 : 0]!, message));
    }
    await sleep(1);
  }
  await Promise.all(sends);
  const elapsedMs = performance.now() - started;
  await batcher.flushThenClose();

  const text = await registry.metrics();
  const batches = metricSum(text, 'sluice_side_records_per_send_count');
  assert.equal(metricSum(text, 'sluice_side_records_per_send_sum'), 20_000);
  // At most one send per 10 ms interval (none was full: 2,000 records). The gaps are read with
  // Date.now() on this side of the producer thread, so a loaded machine can show one a few ms short;
  // without the interval they would be 1-2 ms (a send every tick).
  assert.equal(starts.length, batches);
  const gaps = starts.slice(1).map((at, i) => at - starts[i]!);
  const median = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)]!;
  assert.ok(median >= 9, `median gap between sendBatches ${median} ms`);
  assert.ok(
    Math.min(...gaps) >= 5,
    `sendBatches ${Math.min(...gaps)} ms apart (${batches} in ${elapsedMs.toFixed(0)} ms)`,
  );
  assert.ok(20_000 / batches >= 50, `${(20_000 / batches).toFixed(1)} records per sendBatch`);
  assert.equal(await recordsIn(topics[0]!), 18_000);
  assert.equal(await recordsIn(topics[1]!), 2_000);
});

it('the broker refuses one record of 1,000 for its size: that one is rejected (typed, counted), the other 999 are written', async (t) => {
  const registry = new Registry();
  const batcher = new RecordBatcher(thread, {
    lingerMs: 2,
    logger: createLogger({ name: 'rb', level: 'silent' }),
    registry,
  });
  const TOO_LARGE = 500;
  const sends = Array.from({ length: 1_000 }, (_, n) =>
    batcher.send(smallTopic, {
      key: `user-${n % 97}`,
      value: n === TOO_LARGE ? 'x'.repeat(SMALL_LIMIT * 2) : JSON.stringify({ messageId: `m-${n}`, attempt: 1 }),
    }),
  );
  const settled = await Promise.allSettled(sends);
  const rejected = settled.flatMap((s, n) => (s.status === 'rejected' ? [{ n, err: s.reason as unknown }] : []));
  assert.deepEqual(
    rejected.map((r) => r.n),
    [TOO_LARGE],
  );
  const { err } = rejected[0]!;
  assert.ok(err instanceof SideRecordRefusedError, String(err));
  assert.equal(err.reason, 'MESSAGE_TOO_LARGE');
  assert.equal(err.retryable, false);
  assert.equal(err.topic, smallTopic);
  const counted = await registry.metrics();
  assert.equal(metricSum(counted, 'sluice_side_records_refused_total'), 1);
  assert.ok(
    counted.includes(`sluice_side_records_refused_total{topic="${smallTopic}",reason="MESSAGE_TOO_LARGE"} 1`),
    counted,
  );

  // Every send has settled, so the topic holds all it will: read it whole. A half of a batch that the
  // broker wrote before it refused the other half is written again (at-least-once): duplicates allowed.
  const written = await recordsIn(smallTopic);
  const read = await readTopic(kafka, smallTopic, { count: written, timeoutMs: 60_000 });
  t.diagnostic(
    `${metricSum(counted, 'sluice_side_records_per_send_count')} sendBatches written, ${written} records in the topic`,
  );
  const ids = new Set(read.map((r) => (JSON.parse(r.value!.toString()) as { messageId: string }).messageId));
  const expected = Array.from({ length: 1_000 }, (_, n) => `m-${n}`).filter((id) => id !== `m-${TOO_LARGE}`);
  assert.deepEqual([...ids].sort(), expected.sort(), 'every other record is in the topic');
  assert.ok(
    read.every((r) => r.value!.length < SMALL_LIMIT),
    'the refused record is not',
  );

  // The writer goes on: a record sent after the refusal is written.
  await batcher.send(smallTopic, { key: 'after', value: JSON.stringify({ messageId: 'after' }) });
  await batcher.flushThenClose();
});
