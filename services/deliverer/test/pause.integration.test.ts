import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SluiceConfig } from '@sluice/config';
import { stateKey, writeDestinationState, type DestinationStateName } from '@sluice/destination-state';
import type { AttemptEvent } from '@sluice/envelope';
import { SafeProducer } from '@sluice/kafka';
import {
  metric,
  readTopic,
  receivedEnvelope,
  sleep,
  startReceiver,
  testConfig,
  testKafka,
  testServiceContext,
  waitForStateApplied,
  watchTopics,
  type Receiver,
  type TopicWatcher,
  waitUntil,
} from '@sluice/testkit';
import { parkedTopicName } from '@sluice/topology';
import type { Kafka } from 'kafkajs';
import { createDeliverer, type DelivererService } from '../src/index.ts';
import { produceEvents } from './kafka-helpers.ts';

// Pausing one endpoint, then all of them, on the real broker: the in-process deliverer, real
// receivers. The whole-destination pause under load, restarts and batches: test/drills/pause-resume.test.ts.

describe('pausing endpoints on the real broker', () => {
  let first: Receiver;
  let second: Receiver;
  let config: SluiceConfig;
  let service: DelivererService;
  let kafka: Kafka;
  let producer: SafeProducer;
  let seen: TopicWatcher;
  const refs: string[] = [];
  const set = async (state: DestinationStateName, endpoint?: number) => {
    const key = stateKey('d', endpoint === undefined ? undefined : refs[endpoint]);
    const at = new Date().toISOString();
    await writeDestinationState(producer, config.kafka.topics.destinationState, key, {
      state,
      reason: 't',
      by: 't',
      at,
    });
    // In force once the deliverer has read it: its applied offset of the state topic says so.
    await waitForStateApplied(kafka, { topic: config.kafka.topics.destinationState, base: service.port });
  };
  const send = (from: number, n: number) =>
    produceEvents(
      kafka,
      config.kafka.topics.events,
      Array.from({ length: n }, (_, i) =>
        receivedEnvelope({ sourceId: 's', messageId: `m-${from + i}`, userId: 'one-user' }),
      ),
    );
  const ids = (r: Receiver) => r.requests.map((q) => String(q.headers['x-message-id']));

  before(async () => {
    first = await startReceiver();
    second = await startReceiver();
    config = testConfig({
      sources: [{ id: 's', writeKeys: ['k'] }],
      destinations: [
        {
          id: 'd',
          type: 'webhooks',
          sourceIds: ['s'],
          settings: { webhooks: [{ url: first.url }, { url: second.url }] },
        },
      ],
      // One record in flight per partition: arrival order is the topics' order, so the test reads
      // what parking and the hand-over did (with more, order holds within the in-flight window).
      delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] }, maxInFlightPerPartition: 1 },
    });
    refs.push(...config.destinations[0]!.endpoints.map((e) => e.ref));
    kafka = testKafka({ clientId: 'deliverer-pause-test' });
    producer = new SafeProducer(kafka);
    await producer.connect();
    service = await createDeliverer(testServiceContext('deliverer', config), {
      port: 0,
      parkCheckIntervalMs: 50,
    }).start();
    seen = await watchTopics(kafka, [config.kafka.topics.attempts]);
  });

  after(async () => {
    await service?.close();
    await seen?.stop();
    await producer?.disconnect();
    await Promise.all([first?.close(), second?.close()]);
  });

  it('a paused endpoint gets nothing while its neighbour delivers; all paused → parked; one resumed → the parked ones go to it, in order', async () => {
    await set('paused', 0);
    await send(0, 5);
    // The first deliveries wait for the consumer group's first assignment too: slow on a busy machine.
    await second.waitFor(5, 60_000);
    assert.deepEqual(ids(second), ['m-0', 'm-1', 'm-2', 'm-3', 'm-4']);
    assert.equal(first.requests.length, 0, 'the paused endpoint got no request');

    // Never paused whole yet: no parked topic (it is created at the first park).
    const admin = kafka.admin();
    await admin.connect();
    assert.equal((await admin.listTopics()).includes(parkedTopicName(config, 'd')), false, 'no parked topic yet');
    await set('paused', 1);
    await send(5, 20);
    // Counted once the park write is acknowledged.
    const parked = () => metric(service.port, 'sluice_deliverer_parked_total');
    await waitUntil(async () => (await parked()) >= 20, 30_000, 'every event parked');
    assert.equal(await parked(), 20);
    assert.equal(
      (await readTopic(kafka, parkedTopicName(config, 'd'), { count: 20 })).length,
      20,
      'on its parked topic, created by the first',
    );
    // Every event handled (parked): a request made for one would be in flight or counted by now.
    assert.equal(await metric(service.port, 'sluice_deliverer_in_flight_requests'), 0);
    assert.equal(await metric(service.port, 'sluice_deliverer_attempts_total'), 5);
    assert.equal(first.requests.length + second.requests.length, 5, 'no attempt while every endpoint is paused');
    const attempts = () =>
      seen.records(config.kafka.topics.attempts).map((r) => JSON.parse(String(r.value)) as AttemptEvent);
    assert.equal(attempts().length, 5, 'no attempt record either');

    await set('active', 0);
    await first.waitFor(20);
    // One user, one partition: the parked events come out in the order they arrived.
    assert.deepEqual(
      ids(first),
      Array.from({ length: 20 }, (_, i) => `m-${5 + i}`),
    );
    await send(25, 3);
    await first.waitFor(23);
    assert.deepEqual(ids(first).slice(20), ['m-25', 'm-26', 'm-27'], 'then the live ones, behind them');
    assert.equal(second.requests.length, 5, 'the still-paused endpoint got nothing');
    // The lag is read on the parking's checks, after the delivered records are committed.
    await waitUntil(
      async () => (await metric(service.port, 'sluice_deliverer_parked_lag')) === 0,
      10_000,
      'no parked lag',
    );
    // Drained: the delivered parked records are deleted (the topic itself keeps records forever).
    try {
      await waitUntil(
        async () => {
          const offsets = await admin.fetchTopicOffsets(parkedTopicName(config, 'd'));
          return offsets.reduce((n, p) => n + Number(p.low), 0) >= 20 && offsets.every((p) => p.low === p.high);
        },
        10_000,
        'the delivered parked records deleted',
      );
    } finally {
      await admin.disconnect();
    }
  });
});

describe('the window while parked, on the real broker', () => {
  let receiver: Receiver;
  let config: SluiceConfig;
  let service: DelivererService;
  let kafka: Kafka;
  let producer: SafeProducer;
  let seen: TopicWatcher;

  before(async () => {
    receiver = await startReceiver();
    config = testConfig({
      sources: [{ id: 's', writeKeys: ['k'] }],
      destinations: [{ id: 'w', type: 'webhooks', sourceIds: ['s'], settings: { webhookUrl: receiver.url } }],
      delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
      // A shrunk window: the events stay parked for longer than all of it.
      retry: { window: '1500ms' },
    });
    kafka = testKafka({ clientId: 'deliverer-pause-window-test' });
    producer = new SafeProducer(kafka);
    await producer.connect();
    service = await createDeliverer(testServiceContext('deliverer', config), {
      port: 0,
      parkCheckIntervalMs: 50,
    }).start();
    seen = await watchTopics(kafka, [config.kafka.topics.deadLetter]);
  });

  after(async () => {
    await service?.close();
    await seen?.stop();
    await producer?.disconnect();
    await receiver?.close();
  });

  it('events parked for longer than the whole window are delivered on resume, not dead-lettered', async () => {
    const set = async (state: DestinationStateName) => {
      const at = new Date().toISOString();
      await writeDestinationState(producer, config.kafka.topics.destinationState, 'w', {
        state,
        reason: 't',
        by: 't',
        at,
      });
      await waitForStateApplied(kafka, { topic: config.kafka.topics.destinationState, base: service.port });
    };
    await set('paused');
    const events = [0, 1, 2].map((i) => receivedEnvelope({ sourceId: 's', messageId: `w-${i}`, userId: 'u' }));
    await produceEvents(kafka, config.kafka.topics.events, events);
    await waitUntil(
      async () => (await metric(service.port, 'sluice_deliverer_parked_total')) >= 3,
      30_000,
      'all three parked',
    );
    assert.equal((await readTopic(kafka, parkedTopicName(config, 'w'), { count: 3 })).length, 3, 'all three parked');
    await sleep(2_500); // parked past the 1.5 s window (a shrunk duration: the deliverer's own clock)
    assert.equal(receiver.requests.length, 0, 'nothing delivered while paused');
    await set('active');
    await receiver.waitFor(3);
    assert.deepEqual(
      receiver.requests.map((r) => r.headers['x-message-id']),
      ['w-0', 'w-1', 'w-2'],
    );
    assert.equal(seen.records(config.kafka.topics.deadLetter).length, 0, 'none dead-lettered window_exhausted');
  });
});
