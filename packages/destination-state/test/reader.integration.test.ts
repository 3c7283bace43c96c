import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  startDestinationStateReader,
  stateKey,
  writeDestinationState,
  type DestinationStateReader,
  type DestinationStateValue,
} from '@sluice/destination-state';
import { SafeProducer, type Kafka } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { createTestTopics, testConfig, testKafka, waitUntil } from '@sluice/testkit';

const logger = createLogger({ name: 'destination-state-test', level: process.env.LOG_LEVEL ?? 'warn' });
const value = (state: DestinationStateValue['state'], reason: string): DestinationStateValue => ({
  state,
  reason,
  by: 'test',
  at: new Date().toISOString(),
});

describe('destination state on a real broker', () => {
  const config = testConfig();
  const topic = config.kafka.topics.destinationState;
  let kafka: Kafka;
  let producer: SafeProducer;
  const readers: DestinationStateReader[] = [];

  before(async () => {
    kafka = testKafka();
    await createTestTopics(kafka, config);
    producer = new SafeProducer(kafka);
    await producer.connect();
  });
  after(async () => {
    for (const r of readers) await r.close();
    await producer.disconnect();
  });

  it('two live readers converge within seconds; a reader started later sees only the latest values', async () => {
    const a = await startDestinationStateReader(kafka, topic, logger);
    const b = await startDestinationStateReader(kafka, topic, logger);
    readers.push(a, b);
    await Promise.all([a.ready, b.ready]);
    assert.equal(a.view.get('dest-a').state, 'active');

    const written = Date.now();
    await writeDestinationState(producer, topic, 'dest-a', value('paused', 'maintenance'));
    await writeDestinationState(producer, topic, stateKey('dest-b', 'https://b.example/h'), value('disabled', 'gone'));
    await writeDestinationState(producer, topic, 'dest-unknown', { ...value('paused', 'x'), auto: true });
    for (const r of [a, b]) {
      await waitUntil(() => r.view.get('dest-b', 'https://b.example/h').state === 'disabled', 5_000, 'convergence');
      assert.equal(r.view.get('dest-a').state, 'paused');
      assert.equal(r.view.get('dest-a').reason, 'maintenance');
    }
    const convergedMs = Date.now() - written;
    assert.ok(convergedMs < 5_000, `converged in ${convergedMs} ms`);

    await writeDestinationState(producer, topic, 'dest-a', value('active', 'done'));
    await writeDestinationState(producer, topic, 'dest-unknown', null);
    await waitUntil(() => a.view.get('dest-a').state === 'active' && b.view.get('dest-a').state === 'active', 5_000);

    // A restart: a new reader reads the topic from the beginning and ends with the latest values.
    await a.close();
    readers.splice(readers.indexOf(a), 1);
    const restarted = await startDestinationStateReader(kafka, topic, logger);
    readers.push(restarted);
    await restarted.ready;
    assert.equal(restarted.view.get('dest-a').state, 'active');
    assert.equal(restarted.view.get('dest-a').reason, 'done');
    assert.equal(restarted.view.get('dest-b', 'https://b.example/h').state, 'disabled');
    assert.equal(restarted.view.value('dest-unknown'), undefined);
  });
});
