import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TopicMessages } from 'kafkajs';
import { createLogger, type Logger } from '@sluice/logging';
import { RecordBatcher, RecordBatcherClosedError } from '../src/record-batcher.ts';

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
