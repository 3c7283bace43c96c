import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonValues, readTopic, testConfig } from '@sluice/testkit';
import { basic, post, startIngest, type RunningIngest } from './helpers.ts';

const ADMIN = 'admin-token-for-tests-of-32-characters-or-more';

describe('deletion requests and rate limits', () => {
  let ingest: RunningIngest;
  before(async () => {
    ingest = await startIngest(
      testConfig({
        sources: [
          { id: 's1', writeKeys: ['k1'], rateLimit: { perSecond: 1, burst: 3 } },
          { id: 's2', writeKeys: ['k2'] },
          { id: 's3', writeKeys: ['k3'] },
        ],
        destinations: [
          { id: 'd1', type: 'webhooks', sourceIds: ['s1'], settings: { webhookUrl: 'https://example.com/hook' } },
          {
            id: 'd2',
            type: 'webhooks',
            sourceIds: ['s2', 's1'],
            settings: { webhookUrl: 'https://example.com/hook2' },
          },
          {
            id: 'd3',
            type: 'webhooks',
            enabled: false,
            sourceIds: ['s3'],
            settings: { webhookUrl: 'https://example.com/off' },
          },
        ],
        ingest: { adminToken: ADMIN },
      }),
    );
  });
  after(() => ingest.service.close());

  test('POST /v1/deletions: 3 sources, 2 with enabled destinations → exactly 2 delete envelopes', async () => {
    const before = Date.now();
    const res = await post(`${ingest.url}/v1/deletions`, { userId: 'forget-me' }, { authorization: `Bearer ${ADMIN}` });
    assert.equal(res.status, 202);
    assert.match(res.json.id, /^[0-9a-f-]{36}$/);
    const records = await readTopic(ingest.kafka, ingest.config.kafka.topics.events, {
      count: 3,
      timeoutMs: 6_000,
      settleMs: 500,
    });
    const deletes = jsonValues(records).filter((e) => e.type === 'delete');
    assert.equal(deletes.length, 2);
    assert.deepEqual(deletes.map((d) => d.sourceId).sort(), ['s1', 's2']);
    for (const d of deletes) {
      assert.deepEqual(Object.keys(d).sort(), ['messageId', 'receivedAt', 'sourceId', 'timestamp', 'type', 'userId']);
      assert.equal(d.messageId, res.json.id);
      assert.equal(d.userId, 'forget-me');
      assert.match(String(d.timestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.ok(Date.parse(String(d.timestamp)) >= before - 5 && Date.parse(String(d.timestamp)) <= Date.now());
    }
    assert.deepEqual(records.map((r) => r.key).sort(), ['s1:forget-me', 's2:forget-me']);
  });

  test('deletions: wrong or missing token → 401, bad body → 400, given sourceIds only', async () => {
    assert.equal(
      (await post(`${ingest.url}/v1/deletions`, { userId: 'x' }, { authorization: 'Bearer wrong' })).status,
      401,
    );
    assert.equal((await post(`${ingest.url}/v1/deletions`, { userId: 'x' })).status, 401);
    assert.equal(
      (await post(`${ingest.url}/v1/deletions`, { sourceIds: ['s1'] }, { authorization: `Bearer ${ADMIN}` })).status,
      400,
    );
    assert.equal(
      (
        await post(
          `${ingest.url}/v1/deletions`,
          { userId: 'x', sourceIds: ['nope'] },
          { authorization: `Bearer ${ADMIN}` },
        )
      ).status,
      400,
    );
    const only = await post(
      `${ingest.url}/v1/deletions`,
      { userId: 'only-s2', sourceIds: ['s2', 's3'] },
      { authorization: `Bearer ${ADMIN}` },
    );
    assert.equal(only.status, 202);
    const records = await readTopic(ingest.kafka, ingest.config.kafka.topics.events, {
      count: 3,
      timeoutMs: 6_000,
      settleMs: 500,
    });
    const mine = jsonValues(records).filter((e) => e.userId === 'only-s2');
    assert.deepEqual(
      mine.map((e) => e.sourceId),
      ['s2'],
    );
  });

  test('no admin token configured → 404', async () => {
    const other = await startIngest(testConfig({ sources: [{ id: 's1', writeKeys: ['k1'] }] }));
    try {
      const res = await post(`${other.url}/v1/deletions`, { userId: 'x' }, { authorization: `Bearer ${ADMIN}` });
      assert.equal(res.status, 404);
    } finally {
      await other.service.close();
    }
  });

  test('per-source rate limit → 429 with Retry-After; other sources unaffected', async () => {
    const call = { userId: 'u', event: 'E' };
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 5; i++) {
      const res = await post(`${ingest.url}/v1/track`, call, { authorization: basic('k1') });
      statuses.push(res.status);
      if (res.status === 429) {
        retryAfter = res.headers.get('retry-after');
        assert.equal(res.json.code, 'rate_limited');
      }
    }
    assert.deepEqual(statuses.slice(0, 3), [200, 200, 200]);
    assert.ok(statuses.slice(3).includes(429), String(statuses));
    assert.ok(Number(retryAfter) >= 1);
    assert.equal((await post(`${ingest.url}/v1/track`, call, { authorization: basic('k2') })).status, 200);
  });
});
