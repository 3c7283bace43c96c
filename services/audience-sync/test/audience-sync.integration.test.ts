import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REJECT_HEADERS } from '@sluice/envelope';
import { readTopic, waitUntil, scrapeMetrics, testKafka } from '@sluice/testkit';
import { ROUTES } from '../src/constants.ts';
import { identifyMessageId } from '../src/domain/message-id.ts';
import { audienceSyncConfig, postChunk, readIdentifies, serviceStarter } from './helpers.ts';

const config = audienceSyncConfig();
const topics = config.kafka.topics;
const start = serviceStarter(config);

const audience = (syncId: string, members: string[], final = true) => ({
  sourceId: 'web',
  audience: 'High Value Users',
  syncId,
  members,
  final,
});
const seen = (ids: { userId: string; traits: Record<string, unknown> }[]) =>
  ids.map((i) => [i.userId, i.traits.high_value_users]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));

test('three syncs over HTTP: all members, then only changes, then nothing; traits; restart; validation', async (t) => {
  let service = await start();

  await t.test('first sync → one identify per member, with the shape of docs/reference/audiences.md', async () => {
    assert.equal((await postChunk(service.port, ROUTES.audiences, audience('s1', ['u1', 'u2'], false))).status, 202);
    assert.equal((await postChunk(service.port, ROUTES.audiences, audience('s1', ['u3'], true))).status, 202);
    const ids = await readIdentifies(topics.events, 3);
    assert.deepEqual(seen(ids), [
      ['u1', true],
      ['u2', true],
      ['u3', true],
    ]);
    const u1 = ids.find((i) => i.userId === 'u1')!;
    assert.equal(u1.type, 'identify');
    assert.equal(u1.sourceId, 'web');
    assert.equal(u1.key, 'web:u1');
    assert.deepEqual(u1.context, { audience: { name: 'High Value Users', key: 'high_value_users', syncId: 's1' } });
    assert.equal(
      u1.messageId,
      identifyMessageId(
        { kind: 'audience', sourceId: 'web', name: 'High Value Users', property: 'high_value_users' },
        'u1',
        's1',
      ),
    );
    assert.match(u1.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  await t.test('second sync (u3 left, u4 joined) → exactly 2; identical third sync → none', async () => {
    assert.equal((await postChunk(service.port, ROUTES.audiences, audience('s2', ['u1', 'u2', 'u4']))).status, 202);
    assert.equal((await postChunk(service.port, ROUTES.audiences, audience('s3', ['u4', 'u2', 'u1']))).status, 202);
    // Wait until the third sync completed (metric), then read everything: exactly 5 so far.
    await waitUntil(
      async () => /sluice_audience_syncs_completed_total\{[^}]*\} 3/.test(await scrapeMetrics(service.port)),
      15_000,
      'third sync',
    );
    const ids = await readIdentifies(topics.events, 5, 2_000);
    assert.equal(ids.length, 5);
    assert.deepEqual(seen(ids.filter((i) => i.context.audience!.syncId === 's2')), [
      ['u3', false],
      ['u4', true],
    ]);
    assert.equal(ids.filter((i) => i.context.audience!.syncId === 's3').length, 0);
  });

  await t.test('a restart rebuilds membership from the state topic', async () => {
    await service.close();
    service = await start();
    assert.equal((await postChunk(service.port, ROUTES.audiences, audience('s4', ['u1', 'u5']))).status, 202);
    const ids = await readIdentifies(topics.events, 8, 2_000);
    assert.deepEqual(seen(ids.filter((i) => i.context.audience!.syncId === 's4')), [
      ['u2', false],
      ['u4', false],
      ['u5', true],
    ]);
  });

  await t.test('computed traits: changed values only', async () => {
    const trait = (syncId: string, values: Record<string, unknown>) => ({
      sourceId: 'web',
      trait: 'Lifetime Value',
      syncId,
      values,
      final: true,
    });
    assert.equal((await postChunk(service.port, ROUTES.traits, trait('t1', { u1: 10, u2: 20 }))).status, 202);
    assert.equal((await postChunk(service.port, ROUTES.traits, trait('t2', { u1: 10, u2: 25 }))).status, 202);
    const ids = (await readIdentifies(topics.events, 11, 2_000)).filter((i) => i.context.computedTrait);
    const got = ids
      .map((i) => [i.context.computedTrait!.syncId, i.userId, i.traits.lifetime_value])
      .sort((a, b) => String(a).localeCompare(String(b)));
    assert.deepEqual(got, [
      ['t1', 'u1', 10],
      ['t1', 'u2', 20],
      ['t2', 'u2', 25],
    ]);
  });

  await t.test(
    'invalid snapshots: 400 naming the field; no token: 401; bad record on the topic → rejected',
    async () => {
      const bad = await postChunk(service.port, ROUTES.audiences, { ...audience('x', ['a']), members: ['a', 7] });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.field, 'members[1]');
      const noFinal = await postChunk(service.port, ROUTES.audiences, {
        sourceId: 'web',
        audience: 'A',
        syncId: 'x',
        members: [],
      });
      assert.equal(noFinal.body.field, 'final');
      const unknown = await postChunk(service.port, ROUTES.audiences, { ...audience('x', []), sourceId: 'nope' });
      assert.deepEqual([unknown.status, unknown.body.code], [400, 'unknown_source']);
      assert.equal((await postChunk(service.port, ROUTES.audiences, audience('x', []), 'wrong')).status, 401);

      const kafka = testKafka();
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({
        topic: topics.audiences,
        messages: [
          { key: 'web:A', value: '{"sourceId":"web","audience":"A","syncId":"q","members":"u1","final":true}' },
        ],
      });
      await producer.disconnect();
      const rejected = await readTopic(kafka, topics.rejected, { count: 1 });
      assert.equal(rejected.length, 1);
      assert.equal(rejected[0]!.headers[REJECT_HEADERS.code], 'missing_field');
      assert.match(rejected[0]!.headers[REJECT_HEADERS.message]!, /^members/);
      assert.equal(rejected[0]!.headers[REJECT_HEADERS.origin], 'audience-sync');
    },
  );

  await t.test('metrics are exposed', async () => {
    const text = await scrapeMetrics(service.port);
    assert.match(text, /sluice_audience_identifies_emitted_total\{[^}]*kind="audience"[^}]*change="joined"[^}]*\} 1/);
    assert.match(text, /sluice_audience_syncs_completed_total/);
  });
});
