import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DestinationStateView, stateKey, type DestinationStateValue } from '@sluice/destination-state';
import type { Admin, RecordSink } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { testConfig } from '@sluice/testkit';
import { parkedTopicName } from '@sluice/topology';
import type { Message } from 'kafkajs';
import { Registry } from 'prom-client';
import type { DeliveryJob } from '../src/intake/delivery-job.ts';
import { PARKED_HEADER } from '../src/parking/parked-job.ts';
import { DelivererMetrics } from '../src/service/metrics.ts';
import { Parking, type ParkedTopicsConsumer } from '../src/parking/parking.ts';
import type { SluiceConfig } from '@sluice/config';

// Parking's steering with stand-ins for Kafka: which topics it holds, when a resumed destination
// goes back to the live path. On the real broker: pause.integration.test.ts and the pause drill.
const config = testConfig({
  sources: [{ id: 's', writeKeys: ['k'] }],
  destinations: ['a', 'b'].map((id) => ({
    id,
    type: 'webhooks',
    sourceIds: ['s'],
    settings: { webhooks: [{ url: `https://${id}1.example/h` }, { url: `https://${id}2.example/h` }] },
  })),
});
const [destA, destB] = config.destinations as [(typeof config.destinations)[0], (typeof config.destinations)[0]];
const topicA = parkedTopicName(config, 'a');
const state = (s: DestinationStateValue['state']): DestinationStateValue => ({
  state: s,
  reason: 'r',
  by: 't',
  at: '2026-11-26T05:00:00.000Z',
});
const job = (destinationId: string): DeliveryJob => ({
  key: 's:u',
  body: Buffer.from('{}'),
  messageId: 'm',
  sourceId: 's',
  destinationId,
  eventType: 'track',
  endpoints: [],
});

/** Parking over stand-ins, the parked topics of `existing` there at start (default: a's and b's), found as at a start. */
async function fixture(current: () => SluiceConfig = () => config, existing = ['a', 'b']) {
  const view = new DestinationStateView();
  const held = new Set<string>();
  const read = new Set<string>();
  const consumer: ParkedTopicsConsumer = {
    hold: (t: string) => held.add(t),
    release: (t: string) => held.delete(t),
    add: (t: string) => read.add(t),
  };
  const topics = new Set(existing.map((id) => parkedTopicName(config, id)));
  const created: string[] = [];
  /** Uncommitted parked records per topic, as the admin answers; `onRead` runs during a lag read. */
  const lag = new Map<string, number>();
  let onRead: (() => void) | undefined;
  const admin = {
    listTopics: async () => [...topics],
    createTopics: async ({ topics: asked }: { topics: { topic: string }[] }) => {
      for (const t of asked) topics.add(t.topic), created.push(t.topic);
      return true;
    },
    fetchTopicMetadata: async ({ topics: asked }: { topics: string[] }) => ({
      topics: asked.map((name) => ({ name, partitions: [{ partitionId: 0, leader: 1 }] })),
    }),
    fetchTopicOffsets: async (topic: string) => {
      onRead?.();
      return [{ partition: 0, low: '0', high: String(lag.get(topic) ?? 0), offset: String(lag.get(topic) ?? 0) }];
    },
    fetchOffsets: async () => [{ topic: '', partitions: [{ partition: 0, offset: '0' }] }],
  } as unknown as Admin;
  const sent: { topic: string; message: Message }[] = [];
  let ack: (() => void) | undefined;
  const sink: RecordSink = {
    send: (topic, message) =>
      new Promise<void>((resolve) => {
        sent.push({ topic, message });
        ack = resolve;
      }),
  };
  const parking = new Parking({
    config: current,
    view,
    sink,
    admin,
    groupId: 'g',
    metrics: new DelivererMetrics(new Registry()),
    logger: createLogger({ name: 'parking-test', level: 'silent' }),
    now: () => 1_000,
    checkEveryMs: 60_000,
  });
  const setOnRead = (f?: () => void) => {
    onRead = f;
  };
  await parking.findTopics();
  return { view, held, read, created, topics, lag, parking, consumer, sent, ack: () => ack?.(), setOnRead };
}

describe('Parking', () => {
  it('a stopped destination (itself, or every endpoint) is held and its events parked; one endpoint alone is left out', async () => {
    const f = await fixture();
    f.view.apply('a', state('paused'));
    await f.parking.start(f.consumer);
    assert.deepEqual([...f.held], [topicA]);
    assert.equal(f.parking.mustPark(destA), true);
    assert.equal(f.parking.mustPark(destB), false, 'nothing parked for b: it goes out directly');

    const [b1, b2] = destB.endpoints.map((e) => e.ref) as [string, string];
    f.view.apply(stateKey('b', b1), state('disabled'));
    assert.equal(f.parking.stopped(destB), false);
    assert.deepEqual(f.parking.activeEndpoints(destB, [b1, b2]), [b2]);
    assert.deepEqual(
      f.parking.activeEndpoints(destB, [b1]),
      [b2],
      'a retry naming only the stopped one goes to the other',
    );
    f.view.apply(stateKey('b', b2), state('paused'));
    assert.equal(f.parking.stopped(destB), true);
    assert.equal(f.held.has(parkedTopicName(config, 'b')), true);
    f.parking.close();
  });

  it('a park write carries the job in its header, on the destination parked topic, with the event key', async () => {
    const f = await fixture();
    await f.parking.start(f.consumer);
    const parked = f.parking.park(job('a'), 500);
    f.ack();
    await parked;
    assert.equal(f.sent[0]?.topic, topicA);
    assert.equal(f.sent[0]?.message.key, 's:u');
    const doc = JSON.parse(String((f.sent[0]!.message.headers as Record<string, string>)[PARKED_HEADER]));
    assert.deepEqual([doc.acceptedAt, doc.parkedAt, doc.destinationId], [500, 1_000, 'a']);
    f.parking.close();
  });

  it('after resume the live path parks until the parked topic is drained and no park write is in flight', async () => {
    const f = await fixture();
    f.view.apply('a', state('paused'));
    await f.parking.start(f.consumer);
    // The timer's period is long here: each check runs when the test says.
    const check = () => f.parking.checkDrained();
    f.lag.set(topicA, 3);
    f.view.apply('a', state('active'));
    assert.deepEqual([...f.held], [], 'released: the parked consumer reads it');
    assert.equal(f.parking.mustPark(destA), true, 'still draining');

    await check();
    assert.equal(f.parking.mustPark(destA), true, 'three records not delivered yet');

    // Drained, but a park write is in flight: not yet.
    f.lag.set(topicA, 0);
    const writing = f.parking.park(job('a'), 0);
    await check();
    assert.equal(f.parking.mustPark(destA), true, 'a park write in flight');
    f.ack();
    await writing;

    // A park write that starts (and even ends) while the lag is read voids that read: its record
    // may be past what was read.
    f.setOnRead(() => {
      void f.parking.park(job('a'), 0);
      f.ack();
    });
    await check();
    assert.equal(f.parking.mustPark(destA), true, 'a write started during the check');
    f.setOnRead();
    await check();
    assert.equal(f.parking.mustPark(destA), false, 'drained: events go out directly again');

    f.view.apply('a', state('paused'));
    assert.equal(f.parking.mustPark(destA), true);
    assert.deepEqual([...f.held], [topicA]);
    f.parking.close();
  });

  it('a held destination gone from the config in force has its parked topic read again (its events are dead-lettered); back and still stopped, held again', async () => {
    let current = config;
    const f = await fixture(() => current);
    f.view.apply('a', state('paused'));
    await f.parking.start(f.consumer);
    assert.deepEqual([...f.held], [topicA]);
    current = { ...config, destinations: [destB] };
    f.parking.configChanged();
    assert.deepEqual([...f.held], [], 'released: the parked consumer reads it');
    f.view.apply('a', state('paused'));
    assert.deepEqual([...f.held], [], 'a state change of a gone destination holds nothing');
    current = config;
    f.parking.configChanged();
    assert.deepEqual([...f.held], [topicA], 'created again while its state is paused: held again');
    f.parking.close();
  });

  it('a parked topic another replica created is read once this one sees it matter: on a resume, or its destination gone', async () => {
    let current = config;
    const f = await fixture(() => current, []);
    f.view.apply('a', state('paused'));
    f.view.apply('b', state('paused'));
    await f.parking.start(f.consumer);
    // Created by another replica's parks while both are paused.
    f.topics.add(topicA);
    f.topics.add(parkedTopicName(config, 'b'));
    f.view.apply('a', state('active'));
    current = { ...config, destinations: [destA] };
    f.parking.configChanged();
    await f.parking.findTopics();
    assert.deepEqual([...f.read].sort(), [topicA, parkedTopicName(config, 'b')]);
    f.parking.close();
  });

  it('a destination that never parked has no parked topic: none read or checked at start, created at its first park and read from then on', async () => {
    const f = await fixture(() => config, []);
    let lagReads = 0;
    f.setOnRead(() => (lagReads += 1));
    await f.parking.start(f.consumer);
    assert.deepEqual(f.parking.topics(), []);
    assert.equal(f.parking.mustPark(destA), false, 'nothing parked: out directly from the first event');
    assert.equal(lagReads, 0, 'no topic asked about');

    f.view.apply('a', state('paused'));
    const parked = f.parking.park(job('a'), 0);
    await new Promise<void>((resolve) => setImmediate(resolve));
    f.ack();
    await parked;
    assert.deepEqual(f.created, [topicA], 'created at its first park');
    assert.deepEqual([...f.read], [topicA], 'the parked consumer reads it from then on');
    assert.equal(f.sent[0]?.topic, topicA);

    f.lag.set(topicA, 1);
    f.view.apply('a', state('active'));
    await f.parking.checkDrained();
    assert.equal(f.parking.mustPark(destA), true, 'draining until its record is delivered');
    f.lag.set(topicA, 0);
    await f.parking.checkDrained();
    assert.equal(f.parking.mustPark(destA), false);
    f.parking.close();
  });
});
