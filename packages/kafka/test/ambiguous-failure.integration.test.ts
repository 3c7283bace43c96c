// Regression: an idempotent send that fails AFTER the broker wrote it must not make the next,
// different send look like a duplicate (which the broker acknowledges without writing).
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { it } from 'node:test';
import kafkajs from 'kafkajs';
import { createLogger } from '@sluice/logging';
import { readTopic, testBrokers, testKafka } from '@sluice/testkit';
import { onePartitionTopic } from './fixtures/one-partition-topic.ts';

it('after an ambiguous failure (written, answer lost) the next batch is really written', async () => {
  let cutAnswers = false;
  const kafka = new kafkajs.Kafka({
    clientId: 'ambiguous-test',
    brokers: testBrokers(),
    logLevel: kafkajs.logLevel.NOTHING,
    retry: { retries: 2, initialRetryTime: 50, maxRetryTime: 200 },
    // While `cutAnswers` is set, a connection is reset as soon as the broker answers anything:
    // the request reached the broker (and was written), the client never hears so.
    socketFactory: ({ host, port, onConnect }) => {
      const socket: Socket = connect({ host, port }, onConnect);
      const emit = socket.emit.bind(socket) as (event: string | symbol, ...args: unknown[]) => boolean;
      socket.emit = ((event: string | symbol, ...args: unknown[]) => {
        if (event === 'data' && cutAnswers) {
          socket.destroy(new Error('connection reset (test)'));
          return true;
        }
        return emit(event, ...args);
      }) as Socket['emit'];
      return socket;
    },
  });
  const { topic, producer } = await onePartitionTopic(kafka, 'ambiguous');
  const batch = (name: string) => Array.from({ length: 5 }, (_, i) => ({ key: 'k', value: `${name}-${i}` }));
  await producer.send(topic, batch('warm-up'));

  cutAnswers = true;
  await assert.rejects(producer.send(topic, batch('a')), 'the send fails: the client never got an answer');
  cutAnswers = false;
  await producer.send(topic, batch('b'));
  await producer.disconnect();

  const logger = createLogger({ name: 'ambiguous-test', level: 'silent' });
  const reader = testKafka({ clientId: 'ambiguous-reader', logger });
  const values = (await readTopic(reader, topic, { count: 15, timeoutMs: 10_000, settleMs: 500 })).map((r) =>
    r.value!.toString(),
  );
  const b = values.filter((v) => v.startsWith('b-'));
  assert.deepEqual(
    b,
    ['b-0', 'b-1', 'b-2', 'b-3', 'b-4'],
    `acknowledged batch b must be on the topic; topic has: ${values.join(', ')}`,
  );
});
