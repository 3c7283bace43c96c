import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { type DestinationActionRecord, newActionId, stateKey } from '@sluice/destination-state';
import { startLocalPostgres, type LocalPostgres } from '@sluice/local-postgres';
import { testConfig, testKafka, testServiceContext, waitUntil } from '@sluice/testkit';
import { openDatabase, type Sql } from '../src/adapters/db/database.ts';
import { createDeliveryLog, type DeliveryLogService } from '../src/service.ts';
import { type ApiCall, callApi, openApiConformance } from './api-client.ts';
import { testSchema } from './helpers.ts';

const ADMIN = 'audit-test-admin-token-of-32-characters-or-more';
const KEY_VARIABLE = 'SLUICE_AUDIT_TEST_KEY';
const PAIRS = 1_050;
const SECOND = 1_000;

/**
 * The audit of actions and changes on the real broker and a real PostgreSQL that two replicas of
 * the log share (docs/reference/destination-actions.md, "Recorded actions"; runtime-destinations.md,
 * "Audit"): more than a thousand actions per tenant all listed by paging, each kept once whichever
 * replica reads it, by the token's name and id; a tenant's pages full; both pruned with the log.
 */
describe('delivery-log audit in PostgreSQL', { timeout: 300_000 }, () => {
  const tenants = ['acme', 'other'];
  const file = {
    sources: tenants.map((tenant) => ({ id: `${tenant}-web`, tenant, writeKeys: [`${tenant}-write-key`] })),
    destinations: tenants.map((tenant) => ({
      id: `${tenant}-hooks`,
      tenant,
      type: 'webhooks',
      sourceIds: [`${tenant}-web`],
      settings: { webhookUrl: `https://${tenant}.example/` },
    })),
    deliveryLog: { adminToken: ADMIN },
  };
  const base = Date.parse('2026-11-01T00:00:00.000Z');
  // After the actions written straight onto the topic, one a second.
  let clock = base + 4 * PAIRS * SECOND + 60 * SECOND;
  let server: LocalPostgres;
  let schema: { name: string; url: string };
  const databases: Sql[] = [];
  const services: DeliveryLogService[] = [];
  let config: ReturnType<typeof testConfig>;
  let first: DeliveryLogService;
  let second: DeliveryLogService;
  let acmeToken: { id: string; secret: string };

  const call = (s: DeliveryLogService, request: ApiCall) => callApi(s.port, { token: ADMIN, ...request });
  const conforms = openApiConformance();
  /** Every page of a list, each checked against its schema; the sizes of the pages too. */
  const allPages = async (
    s: DeliveryLogService,
    list: { path: string; key: string; schema: string; token?: string },
  ) => {
    const items: any[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const sep = list.path.includes('?') ? '&' : '?';
      const page = await call(s, {
        path: cursor === null ? list.path : `${list.path}${sep}cursor=${encodeURIComponent(cursor)}`,
        ...(list.token !== undefined && { token: list.token }),
      });
      assert.equal(page.status, 200, page.text);
      conforms(list.schema, page.body);
      items.push(...page.body[list.key]);
      sizes.push(page.body[list.key].length);
      cursor = page.body.nextCursor;
    } while (cursor !== null);
    return { items, sizes };
  };
  const startLog = async () => {
    const sql = await openDatabase({ url: schema.url });
    databases.push(sql);
    const s = await createDeliveryLog(testServiceContext('delivery-log', config), {
      port: 0,
      now: () => clock,
      sql,
    }).start();
    services.push(s);
    return s;
  };
  const kept = async () =>
    Number((await databases[0]!.query<{ n: number }>('select count(*)::int as n from destination_actions'))[0]!.n);
  /** Action records as another replica (or an older release, `legacy`) writes them onto the actions topic. */
  const writeActions = async (records: DestinationActionRecord[]) => {
    const producer = testKafka().producer();
    await producer.connect();
    try {
      await producer.send({
        topic: config.kafka.topics.destinationActions,
        acks: -1,
        messages: records.map((r) => ({ key: stateKey(r.destinationId, r.endpointRef), value: JSON.stringify(r) })),
      });
    } finally {
      await producer.disconnect();
    }
  };
  const record = (destinationId: string, action: 'pause' | 'resume', at: number): DestinationActionRecord => ({
    action,
    destinationId,
    id: newActionId(),
    state: action === 'pause' ? 'paused' : 'active',
    reason: `${action} at ${at}`,
    by: 'ana',
    byTokenId: 'tok_00000000000000aa',
    at: new Date(at).toISOString(),
  });

  before(async () => {
    process.env[KEY_VARIABLE] = randomBytes(32).toString('hex');
    config = testConfig({ ...file, runtimeDestinations: { keyring: [{ id: 'k1', key: { env: KEY_VARIABLE } }] } });
    server = await startLocalPostgres();
    schema = await testSchema(server.url);
    first = await startLog();
  });
  after(async () => {
    for (const s of services) await s.close();
    await databases[0]?.query(`drop schema ${schema.name} cascade`);
    for (const sql of databases) await sql.close();
    await server?.stop();
  });

  it(`keeps ${4 * PAIRS} actions once each, all listed newest first by paging, an older record without ids too`, async () => {
    const records: DestinationActionRecord[] = [];
    for (let i = 0; i < PAIRS; i++) {
      const at = base + 4 * i * SECOND;
      records.push(
        record('acme-hooks', 'pause', at),
        record('other-hooks', 'pause', at + SECOND),
        record('acme-hooks', 'resume', at + 2 * SECOND),
        record('other-hooks', 'resume', at + 3 * SECOND),
      );
    }
    // The oldest as a release before action ids and token ids wrote it.
    const { id: _id, byTokenId: _tokenId, ...legacy } = records[0]!;
    records[0] = legacy;
    await writeActions(records);
    await waitUntil(async () => (await kept()) === records.length, 60_000, 'every action kept');

    const { items, sizes } = await allPages(first, {
      path: '/api/v1/destination-actions?limit=1000',
      key: 'actions',
      schema: 'ControlActions',
    });
    assert.deepEqual(sizes, [1_000, 1_000, 1_000, 1_000, 200]);
    assert.deepEqual(items, records.toReversed(), 'every action, newest first, as written');
    assert.equal(items.at(-1)?.byTokenId, undefined, 'an older record reads without a token id');

    // A second replica reads the whole topic again into the same database: still each action once.
    second = await startLog();
    await first.close();
    services.splice(services.indexOf(first), 1);
    const marker = record('other-hooks', 'pause', clock);
    await writeActions([marker, record('acme-hooks', 'pause', clock)]);
    await waitUntil(async () => (await kept()) === records.length + 2, 60_000, 'the second replica read the topic');
    first = await startLog();
  });

  it('an action through one replica is listed by the other, by the token name and id whatever the body says', async () => {
    const created = await call(first, {
      method: 'POST',
      path: '/api/v1/tokens',
      body: { name: 'acme-oncall', tenant: 'acme', role: 'manage' },
    });
    assert.equal(created.status, 201, created.text);
    acmeToken = { id: created.body.token.id, secret: created.body.secret };
    await waitUntil(
      async () => (await call(second, { path: '/api/v1/destinations', token: acmeToken.secret })).status === 200,
      10_000,
      'the other replica takes the token',
    );
    clock += SECOND;
    const paused = await call(second, {
      method: 'POST',
      path: '/api/v1/destinations/acme-hooks/pause',
      token: acmeToken.secret,
      body: { reason: 'maintenance', by: 'sluice' },
    });
    assert.equal(paused.status, 200, paused.text);
    conforms('ControlResult', paused.body);
    assert.equal(paused.body.action.by, 'acme-oncall');
    assert.equal(paused.body.action.byTokenId, acmeToken.id);
    await waitUntil(
      async () =>
        (await call(first, { path: '/api/v1/destination-actions?limit=1' })).body.actions[0]?.id ===
        paused.body.action.id,
      10_000,
      'the other replica lists it',
    );
    const [listed] = (await call(first, { path: '/api/v1/destination-actions?limit=1' })).body.actions;
    assert.deepEqual(listed, paused.body.action);
    assert.equal(listed.by, 'acme-oncall', "the token's name, never the body's word");
  });

  it("a tenant token lists only its tenant's actions, every page full but the last", async () => {
    const { items, sizes } = await allPages(first, {
      path: '/api/v1/destination-actions?limit=300',
      key: 'actions',
      schema: 'ControlActions',
      token: acmeToken.secret,
    });
    // Its 2,100 actions written onto the topic, the marker, and the pause through the API.
    assert.equal(items.length, 2 * PAIRS + 2);
    assert.ok(items.every((a) => a.destinationId === 'acme-hooks'));
    assert.deepEqual(sizes, [...Array(7).fill(300), 2]);
    const times = items.map((a) => Date.parse(a.at));
    assert.deepEqual(
      times,
      times.toSorted((a, b) => b - a),
      'newest first',
    );
    const forged = await call(first, { path: '/api/v1/destination-actions?cursor=bm90LWEtY3Vyc29y' });
    assert.equal(forged.status, 400);
    assert.equal(forged.body.field, 'cursor');
  });

  it("records who changed a runtime destination by token id, and a tenant's changes are full pages", async () => {
    const body = (id: string, tenant: string) => ({
      id,
      type: 'webhooks',
      sourceIds: [`${tenant}-web`],
      settings: { webhooks: [{ url: `https://${id}.example/` }] },
    });
    for (const i of [1, 2, 3]) {
      clock += SECOND;
      const mine = await call(first, {
        method: 'POST',
        path: '/api/v1/destination-definitions',
        token: acmeToken.secret,
        body: body(`acme-crm-${i}`, 'acme'),
      });
      assert.equal(mine.status, 201, mine.text);
      clock += SECOND;
      const theirs = await call(first, {
        method: 'POST',
        path: '/api/v1/destination-definitions',
        body: { ...body(`other-crm-${i}`, 'other'), tenant: 'other' },
      });
      assert.equal(theirs.status, 201, theirs.text);
    }
    await waitUntil(
      async () =>
        (await call(second, { path: '/api/v1/destination-definitions', token: acmeToken.secret })).body.definitions
          .length === 4,
      10_000,
      'the other replica reads the new destinations',
    );
    const { items, sizes } = await allPages(second, {
      path: '/api/v1/destination-changes?limit=2',
      key: 'changes',
      schema: 'DefinitionChanges',
      token: acmeToken.secret,
    });
    assert.deepEqual(sizes, [2, 1], 'a full page whenever more of its changes follow');
    assert.deepEqual(
      items.map((c) => [c.destinationId, c.by, c.byTokenId]),
      [3, 2, 1].map((i) => [`acme-crm-${i}`, 'acme-oncall', acmeToken.id]),
    );
    const all = await allPages(second, {
      path: '/api/v1/destination-changes?limit=4',
      key: 'changes',
      schema: 'DefinitionChanges',
    });
    assert.deepEqual(all.sizes, [4, 2]);
    assert.deepEqual(
      all.items.filter((c) => c.destinationId.startsWith('other')).map((c) => [c.by, c.byTokenId]),
      [3, 2, 1].map(() => ['admin', 'admin']),
    );
  });

  it('prunes actions and changes older than the retention, as the log prunes its deliveries', async () => {
    const retentionMs = config.deliveryLog.retentionMs;
    const changedAt = clock;
    // The first half of the actions written onto the topic is past the retention.
    clock = base + 2 * PAIRS * SECOND + retentionMs;
    await first.pruner.runOnce();
    const left = await allPages(first, {
      path: '/api/v1/destination-actions?limit=1000',
      key: 'actions',
      schema: 'ControlActions',
    });
    assert.equal(left.items.length, 2 * PAIRS + 3);
    assert.ok(left.items.every((a) => Date.parse(a.at) >= base + 2 * PAIRS * SECOND));
    assert.equal(
      (await call(first, { path: '/api/v1/destination-changes' })).body.changes.length,
      6,
      'the changes are newer',
    );

    clock = changedAt + retentionMs + 1;
    await first.pruner.runOnce();
    assert.deepEqual((await call(first, { path: '/api/v1/destination-actions' })).body, {
      actions: [],
      nextCursor: null,
    });
    assert.deepEqual((await call(first, { path: '/api/v1/destination-changes' })).body, {
      changes: [],
      nextCursor: null,
    });
  });
});
