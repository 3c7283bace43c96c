import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { tokenCreatedAnswer, tokensAnswer } from '@sluice/log-api';
import { metricSum, scrapeMetrics, testConfig, testServiceContext, waitUntil } from '@sluice/testkit';
import { createDeliveryLog, type DeliveryLogService } from '../src/service.ts';
import { type ApiCall, callApi, openApiConformance } from './api-client.ts';

const ADMIN = 'tokens-test-admin-token-of-32-characters-or-more';
const KEY_VARIABLE = 'SLUICE_TOKENS_TEST_KEY';

/**
 * Tenant tokens on the real broker (docs/reference/tokens.md): created, listed and revoked by the
 * admin through one replica and applied by the other within a second; shown once, kept as digests;
 * refused once expired or revoked; held to the policy's scopes; actions recorded by the token's
 * name; failed authentications rate limited per client address and counted.
 */
describe('delivery-log tenant tokens', { timeout: 120_000 }, () => {
  const file = {
    sources: [{ id: 'acme-web', tenant: 'acme', writeKeys: ['acme-write-key'] }],
    destinations: [
      {
        id: 'acme-hooks',
        tenant: 'acme',
        type: 'webhooks',
        sourceIds: ['acme-web'],
        settings: { webhookUrl: 'https://acme.example/' },
      },
    ],
    deliveryLog: { adminToken: ADMIN },
  };
  let clock = Date.now();
  const services: DeliveryLogService[] = [];
  let first: DeliveryLogService;
  let second: DeliveryLogService;
  const call = (s: DeliveryLogService, request: ApiCall & { method: string }) => callApi(s.port, request);
  const conforms = openApiConformance();
  const create = async (body: object) => {
    const created = await call(first, { method: 'POST', path: '/api/v1/tokens', token: ADMIN, body });
    assert.equal(created.status, 201, created.text);
    assert.ok(tokenCreatedAnswer.is(created.body), tokenCreatedAnswer.mismatch(created.body));
    conforms('TokenCreated', created.body);
    return created.body as { token: { id: string; name: string }; secret: string };
  };

  before(async () => {
    process.env[KEY_VARIABLE] = randomBytes(32).toString('hex');
    const config = testConfig({
      ...file,
      runtimeDestinations: { keyring: [{ id: 'k1', key: { env: KEY_VARIABLE } }] },
    });
    for (let i = 0; i < 2; i++)
      services.push(
        await createDeliveryLog(testServiceContext('delivery-log', config), { port: 0, now: () => clock }).start(),
      );
    [first, second] = services as [DeliveryLogService, DeliveryLogService];
  });
  after(async () => {
    for (const s of services) await s.close();
  });

  it('creates a token shown once, kept as its SHA-256, taken by the other replica within a second', async () => {
    const created = await create({ name: 'acme-ops', tenant: 'acme', role: 'manage' });
    assert.match(created.secret, /^slt_[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
    assert.match(created.token.id, /^tok_[0-9a-f]{16}$/);
    const started = Date.now();
    await waitUntil(
      async () =>
        (await call(second, { method: 'GET', path: '/api/v1/destinations', token: created.secret })).status === 200,
      1_000,
      'the other replica takes the new token within a second',
    );
    assert.ok(Date.now() - started < 1_000);
    const list = await call(second, { method: 'GET', path: '/api/v1/tokens', token: ADMIN });
    assert.ok(tokensAnswer.is(list.body), tokensAnswer.mismatch(list.body));
    conforms('Tokens', list.body);
    assert.deepEqual(
      list.body.tokens.map((t: { name: string; tenant: string; role: string; createdBy: string }) => [
        t.name,
        t.tenant,
        t.role,
        t.createdBy,
      ]),
      [['acme-ops', 'acme', 'manage', 'admin']],
    );
    const digest = createHash('sha256').update(created.secret).digest('hex');
    assert.ok(!list.text.includes(created.secret) && !list.text.includes(digest), 'never the token nor its digest');
  });

  it('refuses a bad request naming the field, and a second token of the same name', async () => {
    for (const [body, field] of [
      [{ name: 'x', tenant: 'acme', role: 'owner' }, 'role'],
      [{ name: 'a b', tenant: 'acme', role: 'read' }, 'name'],
      [{ name: 'x', tenant: 'acme', role: 'read', expiresAt: new Date(clock - 1).toISOString() }, 'expiresAt'],
      [{ name: 'x', tenant: 'acme', role: 'read', token: 'mine' }, 'token'],
      [{ name: 'acme-ops', tenant: 'acme', role: 'read' }, 'name'],
    ] as const) {
      const refused = await call(first, { method: 'POST', path: '/api/v1/tokens', token: ADMIN, body });
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.body.field, field);
    }
  });

  it("holds tenant tokens to their scopes, and records an action by the token's name", async () => {
    const reader = await create({ name: 'acme-reader', tenant: 'acme', role: 'read' });
    const manager = (await call(first, { method: 'GET', path: '/api/v1/tokens', token: ADMIN })).body.tokens.find(
      (t: { name: string }) => t.name === 'acme-ops',
    );
    assert.ok(manager);
    for (const token of [reader.secret]) {
      const pause = await call(first, {
        method: 'POST',
        path: '/api/v1/destinations/acme-hooks/pause',
        token,
        body: { reason: 'read only' },
      });
      assert.equal(pause.status, 403, pause.text);
      assert.equal(pause.body.code, 'forbidden');
      assert.equal((await call(first, { method: 'GET', path: '/api/v1/tokens', token })).status, 403);
    }
    const ops = await create({ name: 'acme-oncall', tenant: 'acme', role: 'manage' });
    assert.equal((await call(first, { method: 'GET', path: '/api/v1/tokens', token: ops.secret })).status, 403);
    const paused = await call(first, {
      method: 'POST',
      path: '/api/v1/destinations/acme-hooks/pause',
      token: ops.secret,
      body: { reason: 'maintenance', by: 'someone-else' },
    });
    assert.equal(paused.status, 200, paused.text);
    assert.equal(paused.body.by, 'acme-oncall', "the token's name, never the body's word");
    assert.equal(paused.body.action.byTokenId, ops.token.id, "and the token's id");
    const resumed = await call(first, {
      method: 'POST',
      path: '/api/v1/destinations/acme-hooks/resume',
      token: ADMIN,
      body: { reason: 'done' },
    });
    assert.equal(resumed.body.by, 'admin');
    assert.equal(resumed.body.action.byTokenId, 'admin');
  });

  it('refuses a token once expired, and once revoked on every replica within a second', async () => {
    const shortLived = await create({
      name: 'acme-temp',
      tenant: 'acme',
      role: 'read',
      expiresAt: new Date(clock + 60_000).toISOString(),
    });
    await waitUntil(
      async () =>
        (await call(second, { method: 'GET', path: '/api/v1/ledger', token: shortLived.secret })).status === 200,
      1_000,
      'the other replica takes the token',
    );
    clock += 60_000;
    const expired = await call(second, { method: 'GET', path: '/api/v1/ledger', token: shortLived.secret });
    assert.equal(expired.status, 401);
    assert.equal(expired.body.message, 'the bearer token expired');

    const doomed = await create({ name: 'acme-doomed', tenant: 'acme', role: 'read' });
    await waitUntil(
      async () =>
        (await call(second, { method: 'GET', path: '/api/v1/destinations', token: doomed.secret })).status === 200,
      1_000,
      'the other replica takes the token',
    );
    const revoked = await call(first, { method: 'DELETE', path: `/api/v1/tokens/${doomed.token.id}`, token: ADMIN });
    assert.equal(revoked.status, 200, revoked.text);
    conforms('TokenRevoked', revoked.body);
    await waitUntil(
      async () =>
        (await call(second, { method: 'GET', path: '/api/v1/destinations', token: doomed.secret })).status === 401,
      1_000,
      'the other replica refuses the revoked token within a second',
    );
    const again = await call(first, { method: 'DELETE', path: `/api/v1/tokens/${doomed.token.id}`, token: ADMIN });
    assert.equal(again.status, 404);
  });

  it('refuses a portal link once the token that minted it is revoked, on every replica within a second; an admin link lives on', async () => {
    clock += 600_000; // the failed authentications of the tests before refilled
    const minter = await create({ name: 'acme-minter', tenant: 'acme', role: 'manage' });
    const mint = async (token: string) => {
      const made = await call(first, { method: 'POST', path: '/api/v1/portal-links', token, body: {} });
      assert.equal(made.status, 201, made.text);
      return made.body.token as string;
    };
    const minted = await mint(minter.secret);
    const byAdmin = await call(first, {
      method: 'POST',
      path: '/api/v1/portal-links',
      token: ADMIN,
      body: { tenant: 'acme' },
    });
    assert.equal(byAdmin.status, 201, byAdmin.text);
    for (const s of services)
      assert.equal((await call(s, { method: 'GET', path: '/api/v1/destinations', token: minted })).status, 200);
    const revoked = await call(first, { method: 'DELETE', path: `/api/v1/tokens/${minter.token.id}`, token: ADMIN });
    assert.equal(revoked.status, 200, revoked.text);
    for (const s of services)
      await waitUntil(
        async () => (await call(s, { method: 'GET', path: '/api/v1/destinations', token: minted })).status === 401,
        1_000,
        'a replica refuses the link of the revoked token within a second',
      );
    const refused = await call(second, { method: 'GET', path: '/api/v1/destinations', token: minted });
    assert.equal(refused.body.message, 'the portal link was minted by a token no longer in force');
    const adminLink = byAdmin.body.token as string;
    assert.equal((await call(second, { method: 'GET', path: '/api/v1/destinations', token: adminLink })).status, 200);
  });

  it('answers 429 to a client address past its failed authentications, counted by reason; a valid token still passes', async () => {
    clock += 600_000; // the failures of the tests before refilled
    const before = metricSum(await scrapeMetrics(second.port), 'sluice_delivery_log_auth_failures_total');
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++)
      statuses.push((await call(second, { method: 'GET', path: '/api/v1/ledger', token: `wrong-${i}` })).status);
    assert.deepEqual(statuses, [...Array(10).fill(401), 429, 429]);
    const limited = await call(second, { method: 'GET', path: '/api/v1/ledger' });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assert.equal((await call(second, { method: 'GET', path: '/api/v1/ledger', token: ADMIN })).status, 200);
    const metrics = await scrapeMetrics(second.port);
    assert.equal(metricSum(metrics, 'sluice_delivery_log_auth_failures_total') - before, 13);
    assert.match(metrics, /sluice_delivery_log_auth_failures_total\{reason="limited"[^}]*\} 3\n/);
    clock += 60_000;
    assert.equal((await call(second, { method: 'GET', path: '/api/v1/ledger', token: 'wrong' })).status, 401);
  });
});
