import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ensureTopics, type Kafka } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { createTestTopics, readTopic, testConfig, testKafka, uniqueName, waitUntil } from '@sluice/testkit';
import { ActionLog } from '../src/adapters/db/action-log.ts';
import type { Sql } from '../src/adapters/db/database.ts';
import { KafkaDestinationControl } from '../src/adapters/kafka/destination-control.ts';
import { testDatabase } from './helpers.ts';

/**
 * The delivery log's destination control on the real broker, its clock fixed: an action and its
 * state are written together or not at all, and two actions on one key in one millisecond stay two
 * (each kept once in the log's database, however often the topic is read).
 */
describe('destination control: actions and states written together', { timeout: 120_000 }, () => {
  const config = testConfig();
  const topics = { state: config.kafka.topics.destinationState, actions: config.kafka.topics.destinationActions };
  const logger = createLogger({ name: 'destination-control-test', level: 'error' });
  const at = Date.parse('2026-11-28T04:00:00.000Z');
  let kafka: Kafka;
  const controls: KafkaDestinationControl[] = [];
  let sql: Sql;
  let kept: ActionLog;
  const control = async (t: { state: string; actions: string }) => {
    const c = new KafkaDestinationControl({
      kafka,
      topics: t,
      clientId: uniqueName('control'),
      logger,
      now: () => at,
      keeper: kept,
    });
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
    sql = await testDatabase();
    kept = new ActionLog(sql);
  });
  after(async () => {
    for (const c of controls) await c.stop();
    await sql.close();
  });
  const listed = async () => (await kept.page({ limit: 10 }))!.actions;

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
    await assert.rejects(
      broken.act({
        destinationId: 'd',
        action: 'pause',
        reason: 'maintenance '.repeat(20),
        by: 'ana',
        byTokenId: 'tok_a',
      }),
    );
    assert.equal(await written(topics.state), 0, 'no state record without its action record');
    assert.equal(broken.get('d'), undefined);
  });

  it('two actions on one key in the same millisecond: both recorded, in order, each with its state', async () => {
    const c = await control(topics);
    const on = { destinationId: 'd', endpointRef: 'https://e.example/h', by: 'ana', byTokenId: 'tok_a' };
    const paused = await c.act({ ...on, action: 'pause', reason: 'maintenance' });
    const resumed = await c.act({ ...on, action: 'resume', reason: 'done' });
    assert.equal(paused.at, resumed.at, 'one millisecond');
    assert.notEqual(paused.id, resumed.id);
    assert.equal(paused.byTokenId, 'tok_a');
    // A second reader of the same topic into the same database: each action still kept once.
    await control(topics);
    await waitUntil(async () => (await listed()).length === 2, 10_000, 'both actions listed');
    assert.deepEqual(await listed(), [resumed, paused], 'newest first, each as written, its token id included');
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
