import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TopicMessages } from 'kafkajs';
import { createLogger, type Logger } from '@sluice/logging';
import { Registry } from 'prom-client';
import { SideRecordRefusedError } from '../src/errors.ts';
import { ProducerThreadError } from '../src/producer-thread.ts';
import { RecordBatcher, RecordBatcherClosedError, sendDelay } from '../src/record-batcher.ts';
import { refusalOf } from '../src/record-refusal.ts';

/** A producer that refuses the first `failures` batches (as during a broker outage), then takes them. */
function flakyProducer(failures: number) {
  const written: TopicMessages[][] = [];
  let calls = 0;
  return {
    written,
    calls: () => calls,
    sendBatch: async (batch: TopicMessages[]) => {
      calls += 1;
      if (calls <= failures) throw new Error(`broker away (try ${calls})`);
      written.push(batch);
    },
  };
}

const logger = createLogger({ name: 'record-batcher-test', level: 'silent' });

/** A logger that keeps the `tries` of each warning. */
const triesLogger = (tries: number[]) =>
  ({ warn: (fields: { tries: number }) => void tries.push(fields.tries) }) as unknown as Logger;

describe('RecordBatcher', () => {
  it('gathers concurrent records into one batch per linger, grouped by topic', async () => {
    const producer = flakyProducer(0);
    const batcher = new RecordBatcher(producer, { lingerMs: 5, logger });
    await Promise.all([
      batcher.send('a', { value: '1' }),
      batcher.send('b', { value: '2' }),
      batcher.send('a', { value: '3' }),
    ]);
    assert.equal(producer.written.length, 1);
    assert.deepEqual(
      producer.written[0]!.map((t) => [t.topic, t.messages.map((m) => m.value)]),
      [
        ['a', ['1', '3']],
        ['b', ['2']],
      ],
    );
  });

  it('a batch Kafka does not take is tried again until written; its senders wait instead of failing', async () => {
    const producer = flakyProducer(3);
    const failures: number[] = [];
    const batcher = new RecordBatcher(producer, {
      lingerMs: 1,
      retryMinMs: 10,
      retryMaxMs: 20,
      logger: triesLogger(failures),
    });
    const started = Date.now();
    await batcher.send('attempts', { value: 'x' });
    assert.equal(producer.calls(), 4);
    assert.deepEqual(failures, [1, 2, 3]);
    assert.ok(Date.now() - started >= 10 + 20 + 20, 'backed off between tries');
    assert.deepEqual(
      producer.written[0]![0]!.messages.map((m) => m.value),
      ['x'],
    );
  });

  it('close() ends the tries: the waiting batch and anything unsent are rejected, later sends too', async () => {
    const producer = flakyProducer(Number.POSITIVE_INFINITY);
    const batcher = new RecordBatcher(producer, { lingerMs: 1, retryMinMs: 60_000, retryMaxMs: 60_000, logger });
    const waiting = batcher.send('attempts', { value: 'x' });
    await new Promise((r) => setTimeout(r, 20)); // first try failed; now backing off for a minute
    batcher.close();
    await assert.rejects(waiting, RecordBatcherClosedError);
    await assert.rejects(batcher.send('attempts', { value: 'y' }), RecordBatcherClosedError);
    await batcher.flush(); // returns at once once closed
  });
});

/** A producer whose batches stay in flight until the test acknowledges them. */
function handAckedProducer() {
  const inFlight: { records: number; at: number; ack: () => void }[] = [];
  const sent: { records: number; at: number }[] = [];
  return {
    inFlight,
    sent,
    sendBatch: (batch: TopicMessages[]) =>
      new Promise<void>((ack) => {
        const records = batch.reduce((n, t) => n + t.messages.length, 0);
        sent.push({ records, at: Date.now() });
        inFlight.push({ records, at: Date.now(), ack });
      }),
    ackAll: () => inFlight.splice(0).forEach((b) => b.ack()),
  };
}

/** Lets promise callbacks run (setImmediate is not among the mocked timers). */
const settle = () => new Promise((r) => setImmediate(r));

describe('RecordBatcher send policy', () => {
  const policy = { lingerMs: 2, sendIntervalMs: 10, maxBatch: 100, maxBatchBytes: 1_000 };

  it('sendDelay: idle → the linger; under load → the interval since the last send; full → at once', () => {
    assert.equal(sendDelay(policy, { now: 1_000, waiting: 1, waitingBytes: 10, oldestAt: 1_000, lastSendAt: 0 }), 2);
    assert.equal(sendDelay(policy, { now: 1_001, waiting: 5, waitingBytes: 50, oldestAt: 1_000, lastSendAt: 0 }), 1);
    assert.equal(
      sendDelay(policy, { now: 1_003, waiting: 40, waitingBytes: 400, oldestAt: 1_000, lastSendAt: 995 }),
      2,
    );
    assert.equal(
      sendDelay(policy, { now: 1_003, waiting: 40, waitingBytes: 400, oldestAt: 990, lastSendAt: 1_001 }),
      8,
    );
    assert.equal(
      sendDelay(policy, { now: 1_003, waiting: 100, waitingBytes: 100, oldestAt: 1_003, lastSendAt: 1_001 }),
      0,
    );
    assert.equal(
      sendDelay(policy, { now: 1_003, waiting: 3, waitingBytes: 1_000, oldestAt: 1_003, lastSendAt: 1_001 }),
      0,
    );
    assert.equal(
      sendDelay({ ...policy, sendIntervalMs: 0 }, { now: 9, waiting: 3, waitingBytes: 30, oldestAt: 5, lastSendAt: 8 }),
      0,
    );
  });

  it('an idle batcher sends after the linger; under load batches leave once per interval and grow with the rate', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
    const producer = handAckedProducer();
    const registry = new Registry();
    const batcher = new RecordBatcher(producer, { ...policy, maxBatchBytes: 1_000_000, logger, registry });
    const acked: number[] = [];
    const send = (n: number) => {
      for (let i = 0; i < n; i++) void batcher.send('attempts', { value: 'x' }).then(() => acked.push(Date.now()));
    };

    send(1);
    t.mock.timers.tick(1);
    assert.equal(producer.sent.length, 0, 'still lingering');
    t.mock.timers.tick(1);
    assert.deepEqual(producer.sent, [{ records: 1, at: 2 }], 'idle: leaves after the 2 ms linger');

    // Load: 5 records a ms for 20 ms, each batch acknowledged within the ms it left in.
    for (let ms = 2; ms < 22; ms++) {
      send(5);
      producer.ackAll();
      await settle();
      t.mock.timers.tick(1);
      await settle();
    }
    producer.ackAll();
    await settle();
    assert.deepEqual(
      producer.sent,
      [
        { records: 1, at: 2 },
        { records: 50, at: 12 },
        { records: 50, at: 22 },
      ],
      'under load, one send per 10 ms interval with all its records',
    );
    assert.equal(acked.length, 101, 'every send resolved');

    // A full batch does not wait for the interval.
    send(99);
    t.mock.timers.tick(1);
    send(1);
    assert.equal(producer.sent.at(-1)!.records, 100);
    assert.equal(producer.sent.at(-1)!.at, Date.now(), 'left when it was full');
    producer.ackAll();
    await settle();

    // Idle again: a lone record waits only the linger.
    t.mock.timers.tick(1_000);
    send(1);
    t.mock.timers.tick(2);
    assert.deepEqual(producer.sent.at(-1), { records: 1, at: Date.now() });
    producer.ackAll();
    await settle();
    assert.equal(acked.length, 202);
    const perSend = (await registry.getSingleMetricAsString('sluice_side_records_per_send')).split('\n');
    assert.ok(perSend.includes('sluice_side_records_per_send_sum 202'), perSend.join('\n'));
    assert.ok(perSend.includes('sluice_side_records_per_send_count 5'), perSend.join('\n'));
  });

  it('a batch holds at most maxBatchBytes of keys, values and headers (a larger record alone) and leaves once full', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
    const producer = handAckedProducer();
    const batcher = new RecordBatcher(producer, { ...policy, maxBatchBytes: 1_000, logger });
    const all = [
      ...Array.from({ length: 3 }, () => batcher.send('a', { key: 'k', value: 'v'.repeat(299) })), // 300 bytes each
      batcher.send('a', { key: null, value: 'w'.repeat(90), headers: { h: 'x'.repeat(9) } }), // 100 bytes: 1,000 now
    ];
    assert.deepEqual(
      producer.sent.map((s) => s.records),
      [4],
      '1,000 bytes: full, left at once',
    );
    all.push(batcher.send('a', { value: 'z'.repeat(1_500) }), batcher.send('a', { value: 'y'.repeat(10) }));
    producer.ackAll();
    await settle();
    assert.deepEqual(
      producer.sent.map((s) => s.records),
      [4, 1],
      'the record above the cap left alone, at once',
    );
    producer.ackAll();
    await settle();
    t.mock.timers.tick(10);
    producer.ackAll();
    await Promise.all(all);
    assert.deepEqual(
      producer.sent.map((s) => s.records),
      [4, 1, 1],
    );
  });

  it('records of one tick leave together even with no linger', async () => {
    const producer = handAckedProducer();
    const batcher = new RecordBatcher(producer, { lingerMs: 0, logger });
    const all = Promise.all([batcher.send('a', { value: '1' }), batcher.send('a', { value: '2' })]);
    await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(
      producer.sent.map((s) => s.records),
      [2],
    );
    producer.ackAll();
    await all;
  });
});

/** A kafkajs protocol error as kafkajs throws it (`type`, `retriable`), optionally wrapped as after its own retries. */
function protocolError(type: string, wrapped = false): Error {
  const err = Object.assign(new Error(`broker says ${type}`), { name: 'KafkaJSProtocolError', type, retriable: false });
  return wrapped
    ? Object.assign(new Error('retries exceeded'), { name: 'KafkaJSNumberOfRetriesExceeded', cause: err })
    : err;
}

/**
 * A producer standing in for a broker that refuses (all-or-nothing per `sendBatch`) any batch
 * holding a record whose value starts with `bad`, with `refusal`; it takes every other batch.
 */
function refusingProducer(refusal: () => Error) {
  const written: string[] = [];
  let calls = 0;
  return {
    written,
    calls: () => calls,
    sendBatch: async (batch: TopicMessages[]) => {
      calls += 1;
      const values = batch.flatMap((t) => t.messages.map((m) => String(m.value)));
      if (values.some((v) => v.startsWith('bad'))) throw refusal();
      written.push(...values);
    },
  };
}

describe('RecordBatcher: records Kafka refuses for their content', () => {
  for (const [name, refusal] of [
    ['MESSAGE_TOO_LARGE', () => protocolError('MESSAGE_TOO_LARGE')],
    ['INVALID_RECORD', () => protocolError('INVALID_RECORD')],
    ['CORRUPT_MESSAGE after kafkajs gave up retrying', () => protocolError('CORRUPT_MESSAGE', true)],
    [
      'MESSAGE_TOO_LARGE from the producer thread',
      () => new ProducerThreadError('KafkaJSProtocolError', 'too large', 'MESSAGE_TOO_LARGE'),
    ],
  ] as const) {
    it(`${name}: only the refused records fail (typed, counted), the others are written, later sends too`, async () => {
      const producer = refusingProducer(refusal);
      const registry = new Registry();
      const warned: unknown[] = [];
      const batcher = new RecordBatcher(producer, {
        lingerMs: 1,
        retryMinMs: 60_000,
        logger: { warn: (fields: unknown) => void warned.push(fields) } as unknown as Logger,
        registry,
      });
      const values = Array.from({ length: 100 }, (_, i) => (i === 37 || i === 80 ? `bad-${i}` : `ok-${i}`));
      const settled = await Promise.allSettled(
        values.map((v, i) => batcher.send(i % 2 ? 'attempts' : 'retry', { value: v })),
      );
      const refused = settled.flatMap((s, i) => (s.status === 'rejected' ? [[values[i], s.reason]] : []));
      assert.deepEqual(
        refused.map(([v]) => v),
        ['bad-37', 'bad-80'],
      );
      for (const [, err] of refused) {
        assert.ok(err instanceof SideRecordRefusedError);
        assert.equal(err.code, 'side_record_refused');
        assert.equal(err.retryable, false);
      }
      assert.equal((refused[0]![1] as SideRecordRefusedError).topic, 'attempts');
      assert.equal((refused[1]![1] as SideRecordRefusedError).topic, 'retry');
      assert.deepEqual(
        [...producer.written].sort(),
        values.filter((v) => v.startsWith('ok')).sort(),
        'every other record written, each once',
      );
      assert.ok(producer.calls() < 40, `isolated in ${producer.calls()} sendBatches`);
      const counted = await registry.getSingleMetricAsString('sluice_side_records_refused_total');
      const reason = name.split(' ')[0];
      assert.match(counted, new RegExp(`sluice_side_records_refused_total\\{topic="attempts",reason="${reason}"\\} 1`));
      assert.match(counted, new RegExp(`sluice_side_records_refused_total\\{topic="retry",reason="${reason}"\\} 1`));
      assert.equal(warned.length, 2, 'one warning per refused record');
      assert.ok(!JSON.stringify(warned).includes('bad-'), 'no record content in the log');

      await batcher.send('attempts', { value: 'after' });
      assert.equal(producer.written.at(-1), 'after', 'the batcher goes on writing');
      batcher.close();
    });
  }

  it('records too many together for the broker (none too large alone) are all written, in smaller batches, none rejected', async () => {
    const written: string[] = [];
    let calls = 0;
    const producer = {
      sendBatch: async (batch: TopicMessages[]) => {
        calls += 1;
        const values = batch.flatMap((t) => t.messages.map((m) => String(m.value)));
        if (values.join('').length > 100) throw protocolError('MESSAGE_TOO_LARGE');
        written.push(...values);
      },
    };
    const registry = new Registry();
    const batcher = new RecordBatcher(producer, { lingerMs: 1, logger, registry });
    const values = Array.from({ length: 200 }, (_, i) => `v-${String(i).padStart(3, '0')}`);
    await Promise.all(values.map((v) => batcher.send('attempts', { value: v })));
    assert.deepEqual([...written].sort(), values);
    assert.ok(calls < 100, `${calls} sendBatches`);
    assert.doesNotMatch(await registry.metrics(), /sluice_side_records_refused_total\{/);
  });

  it('a failure that is not a refusal is still tried again until written (nothing is rejected)', async () => {
    let calls = 0;
    const producer = {
      sendBatch: async () => {
        calls += 1;
        if (calls <= 2) throw Object.assign(new Error('leader moved'), { type: 'NOT_LEADER_FOR_PARTITION' });
      },
    };
    const batcher = new RecordBatcher(producer, { lingerMs: 1, retryMinMs: 5, retryMaxMs: 5, logger });
    await Promise.all([batcher.send('a', { value: '1' }), batcher.send('a', { value: '2' })]);
    assert.equal(calls, 3, 'the whole batch tried again, not split');
  });

  it('refusalOf: the content refusals, through causes and the producer thread; nothing else', () => {
    assert.equal(refusalOf(protocolError('MESSAGE_TOO_LARGE')), 'MESSAGE_TOO_LARGE');
    assert.equal(refusalOf(protocolError('RECORD_LIST_TOO_LARGE')), 'RECORD_LIST_TOO_LARGE');
    assert.equal(refusalOf(protocolError('INVALID_TIMESTAMP', true)), 'INVALID_TIMESTAMP');
    assert.equal(refusalOf(new ProducerThreadError('KafkaJSProtocolError', 'x', 'INVALID_RECORD')), 'INVALID_RECORD');
    assert.equal(refusalOf(protocolError('NOT_LEADER_FOR_PARTITION')), undefined);
    assert.equal(refusalOf(new ProducerThreadError('KafkaJSConnectionError', 'x')), undefined);
    assert.equal(refusalOf(new Error('plain')), undefined);
    assert.equal(refusalOf(undefined), undefined);
  });
});
