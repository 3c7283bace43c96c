import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ensureTopics, type Kafka } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { createTestTopics, readTopic, testConfig, testKafka, uniqueName, waitUntil } from '@sluice/testkit';
import { KafkaDestinationControl } from '../src/adapters/kafka/destination-control.ts';

/**
 * The delivery log's destination control on the real broker, its clock fixed: an action and its
 * state are written together or not at all, and two actions on one key in one millisecond stay two.
 */
describe('destination control: actions and states written together', { timeout: 120_000 }, () => {
  const config = testConfig();
  const topics = { state: config.kafka.topics.destinationState, actions: config.kafka.topics.destinationActions };
  const logger = createLogger({ name: 'destination-control-test', level: 'error' });
  const at = Date.parse('2026-11-28T04:00:00.000Z');
  let kafka: Kafka;
  const controls: KafkaDestinationControl[] = [];
  const control = async (t: { state: string; actions: string }) => {
    const c = new KafkaDestinationControl({ kafka, topics: t, clientId: uniqueName('control'), logger, now: () => at });
    controls.push(c);
    await c.start();
    return c;
  };
  const written = async (topic: string) => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      return (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high), 0);
    } finally {
      await admin.disconnect();
    }
  };

  before(async () => {
    kafka = testKafka();
    await createTestTopics(kafka, config);
  });
  after(async () => {
    for (const c of controls) await c.stop();
  });

  it('an action whose record cannot be written changes no state', async () => {
    // An actions topic that refuses every record (each is larger than it takes): the append fails.
    const refusing = uniqueName('actions-refusing');
    const admin = kafka.admin();
    await admin.connect();
    try {
      await ensureTopics(admin, [
        {
          topic: refusing,
          numPartitions: 1,
          replicationFactor: 1,
          configEntries: [{ name: 'max.message.bytes', value: '100' }],
        },
      ]);
    } finally {
      await admin.disconnect();
    }
    const broken = await control({ state: topics.state, actions: refusing });
    await assert.rejects(broken.act('d', undefined, 'pause', 'maintenance '.repeat(20), 'ana'));
    assert.equal(await written(topics.state), 0, 'no state record without its action record');
    assert.equal(broken.get('d'), undefined);
  });

  it('two actions on one key in the same millisecond: both recorded, in order, each with its state', async () => {
    const c = await control(topics);
    const paused = await c.act('d', 'https://e.example/h', 'pause', 'maintenance', 'ana');
    const resumed = await c.act('d', 'https://e.example/h', 'resume', 'done', 'ana');
    assert.equal(paused.at, resumed.at, 'one millisecond');
    assert.notEqual(paused.id, resumed.id);
    await waitUntil(() => c.actions(10).length === 2, 10_000, 'both actions listed');
    assert.deepEqual(
      c.actions(10).map((a) => [a.action, a.id]),
      [
        ['resume', resumed.id],
        ['pause', paused.id],
      ],
    );
    assert.equal(c.get('d', 'https://e.example/h')?.state, 'active');
    // Kafka holds both records of each action: two actions, two states (the latest one in force).
    const actions = await readTopic(kafka, topics.actions, { count: 2 });
    assert.deepEqual(
      actions.map((r) => JSON.parse(String(r.value)).id),
      [paused.id, resumed.id],
    );
    const states = await readTopic(kafka, topics.state, { count: 2 });
    assert.deepEqual(
      states.map((r) => [r.key, JSON.parse(String(r.value)).state]),
      [
        ['d/https://e.example/h', 'paused'],
        ['d/https://e.example/h', 'active'],
      ],
    );
  });
});
