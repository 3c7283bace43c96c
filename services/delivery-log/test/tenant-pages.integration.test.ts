import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { SafeProducer } from '@sluice/kafka';
import {
  testConfig,
  testEnvelope,
  testKafka,
  testKeyring,
  testServiceContext,
  uniqueName,
  waitUntil,
} from '@sluice/testkit';
import { LIMITED_HELD } from '../src/constants.ts';
import { createDeliveryLog, type DeliveryLogService } from '../src/service.ts';
import { type ApiCall, callApi } from './api-client.ts';

const ADMIN = 'tenant-pages-admin-token-of-32-characters-or-more';
const KEY_VARIABLE = 'SLUICE_TENANT_PAGES_TEST_KEY';
const WINDOW_MS = 60_000;
const GRACE_MS = 30_000;
/** Ten sources and ten destinations, by id alternately acme's and globex's: every page of one tenant's skips the other's. */
const IDS = Array.from({ length: 10 }, (_, i) => String(i + 1).padStart(2, '0'));
const tenantOf = (n: string) => (Number(n) % 2 === 1 ? 'acme' : 'globex');
const ACME = IDS.filter((n) => tenantOf(n) === 'acme');
const PAGE = 2;

/**
 * What a tenant token lists is chosen by the query, not filtered after it (docs/reference/tenants.md):
 * with a tenant's rows interleaved with another's, every page but the last is full and the pages
 * together are exactly the tenant's rows; the unaccounted deliveries answer a tenant token without a
 * `destinationId`. Failed authentications behind a trusted proxy count per forwarded client
 * (docs/reference/tokens.md, "Behind a proxy"). On the real delivery log, its embedded database and
 * the real broker.
 */
describe('tenant pages and clients behind a proxy', { timeout: 180_000 }, () => {
  const config = testConfig({
    sources: IDS.map((n) => ({ id: `src-${n}`, tenant: tenantOf(n), writeKeys: [`key-${n}`] })),
    destinations: IDS.map((n) => ({
      id: `dst-${n}`,
      tenant: tenantOf(n),
      type: 'webhooks',
      sourceIds: [`src-${n}`],
      settings: { webhooks: [{ url: `http://127.0.0.1:9/${n}` }] },
    })),
    retry: { window: WINDOW_MS },
    deliveryLog: { adminToken: ADMIN, ledger: { grace: GRACE_MS }, trustedProxies: ['127.0.0.1'] },
    runtimeDestinations: testKeyring(KEY_VARIABLE),
  });
  const producer = new SafeProducer(testKafka());
  const run = uniqueName('pages');
  const start = Date.now();
  let clock = start;
  let service: DeliveryLogService;
  let acme: string;
  let globex: string;

  /** The API as `token` calls it (callApi on this log), with a JSON body and an `If-Match`. */
  const change = (method: string, path: string, r: Omit<ApiCall, 'method' | 'path'>) =>
    callApi(service.port, { method, path, ...r });
  /** A token of `tenant` with `role`, minted once the first time it is asked for, once the service takes it. */
  const tokens = new Map<string, Promise<string>>();
  const mintToken = (tenant: string, role: 'read' | 'manage'): Promise<string> => {
    const name = `${tenant}-${role === 'read' ? 'reader' : 'ops'}`;
    const minted =
      tokens.get(name) ??
      (async () => {
        const created = await change('POST', '/api/v1/tokens', { token: ADMIN, body: { name, tenant, role } });
        assert.equal(created.status, 201, created.text);
        const token = created.body.secret as string;
        await waitUntil(async () => (await call('/api/v1/ledger', { token })).status === 200, 10_000, 'the token');
        return token;
      })();
    tokens.set(name, minted);
    return minted;
  };

  /** One request, from `from` (a loopback address) with the headers given. */
  const call = (path: string, r: { token?: string; from?: string; forwardedFor?: string } = {}) =>
    new Promise<{ status: number; body: any; connection: string | undefined }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: service.port,
          path,
          localAddress: r.from ?? '127.0.0.1',
          headers: {
            ...(r.token !== undefined && { authorization: `Bearer ${r.token}` }),
            ...(r.forwardedFor !== undefined && { 'x-forwarded-for': r.forwardedFor }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode!,
              body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
              connection: res.headers.connection,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });

  /** The runtime resources created in the tests below: where, with what body, and how their answer and audit name them. */
  const KINDS = [
    {
      path: '/api/v1/source-definitions',
      body: (id: string) => ({ id }),
      answer: 'source',
      changes: '/api/v1/source-changes',
      idName: 'sourceId',
    },
    {
      path: '/api/v1/destination-definitions',
      body: (id: string, sourceId: string) => ({
        id,
        type: 'webhooks',
        sourceIds: [sourceId],
        settings: { webhooks: [{ url: 'https://hooks.example/in' }] },
      }),
      answer: 'destination',
      changes: '/api/v1/destination-changes',
      idName: 'destinationId',
    },
  ];

  /** Every page of a list, following its cursor: the ids of each page. */
  const pages = async (path: string, list: string, id: (item: any) => string) => {
    const out: string[][] = [];
    let cursor: string | null = null;
    do {
      const { status, body } = await call(`${path}${cursor === null ? '' : `&cursor=${cursor}`}`, { token: acme });
      assert.equal(status, 200, JSON.stringify(body));
      out.push(body[list].map(id));
      cursor = body.nextCursor;
    } while (cursor !== null && out.length <= IDS.length);
    return out;
  };
  /** Full pages of `PAGE` but the last, and together `expected`. */
  const assertFullPages = (got: string[][], expected: string[]) => {
    for (const page of got.slice(0, -1)) assert.equal(page.length, PAGE, JSON.stringify(got));
    assert.ok(got.at(-1)!.length >= 1 && got.at(-1)!.length <= PAGE, JSON.stringify(got));
    assert.deepEqual(got.flat().sort(), [...expected].sort());
  };

  before(async () => {
    await producer.connect();
    service = await createDeliveryLog(testServiceContext('delivery-log', config), {
      port: 0,
      now: () => clock,
    }).start();
    // One event per source, alternately acme's and globex's in receive time too; none is ever attempted.
    await producer.send(
      config.kafka.topics.events,
      IDS.map((n, i) => {
        const at = new Date(start - (IDS.length - i) * 1_000).toISOString();
        const envelope = testEnvelope({ sourceId: `src-${n}`, messageId: `${run}-${n}`, receivedAt: at });
        return { key: `${run}-${n}`, value: JSON.stringify(envelope) };
      }),
    );
    await waitUntil(
      async () => (await call(`/api/v1/messages?limit=${IDS.length}`, { token: ADMIN })).body.messages?.length === 10,
      60_000,
      'the log has read the ten events',
    );
    acme = await mintToken('acme', 'read');
    globex = await mintToken('globex', 'read');
  });
  after(async () => {
    await producer.disconnect();
    await service?.close();
  });

  it('pages messages, destination and source definitions full, over the tenant’s alone', async () => {
    const messages = await pages(`/api/v1/messages?limit=${PAGE}`, 'messages', (m) => m.messageId);
    assertFullPages(
      messages,
      ACME.map((n) => `${run}-${n}`),
    );
    const destinations = await pages(`/api/v1/destination-definitions?limit=${PAGE}`, 'definitions', (d) => d.id);
    assertFullPages(
      destinations,
      ACME.map((n) => `dst-${n}`),
    );
    const sources = await pages(`/api/v1/source-definitions?limit=${PAGE}`, 'sources', (s) => s.id);
    assertFullPages(
      sources,
      ACME.map((n) => `src-${n}`),
    );
  });

  it('takes a cursor another tenant’s token was given as a position among its own tenant’s rows: nothing of the other', async () => {
    const lists = [
      { path: '/api/v1/messages', list: 'messages', id: (m: any) => m.messageId, of: (n: string) => `${run}-${n}` },
      {
        path: '/api/v1/destination-definitions',
        list: 'definitions',
        id: (d: any) => d.id,
        of: (n: string) => `dst-${n}`,
      },
      { path: '/api/v1/source-definitions', list: 'sources', id: (d: any) => d.id, of: (n: string) => `src-${n}` },
    ];
    const globexIds = (of: (n: string) => string) => IDS.filter((n) => tenantOf(n) === 'globex').map(of);
    for (const { path, list, id, of } of lists) {
      const theirs = await call(`${path}?limit=${PAGE}`, { token: globex });
      assert.equal(theirs.status, 200, JSON.stringify(theirs.body));
      assert.ok(
        theirs.body[list].every((item: any) => globexIds(of).includes(id(item))),
        `${path}: globex's page`,
      );
      const cursor = theirs.body.nextCursor;
      assert.equal(typeof cursor, 'string', `${path}: globex has more than a page`);
      const ours = await call(`${path}?limit=${IDS.length}&cursor=${cursor}`, { token: acme });
      assert.equal(ours.status, 200, JSON.stringify(ours.body));
      const text = JSON.stringify(ours.body);
      for (const other of globexIds(of)) assert.ok(!text.includes(other), `${path}: ${other} in acme's answer ${text}`);
      assert.ok(
        ours.body[list].every((item: any) => ACME.map(of).includes(id(item))),
        `${path}: acme's rows only: ${text}`,
      );
    }
  });

  it('answers the unaccounted deliveries of every destination of a tenant token, chosen by the query', async () => {
    clock = start + WINDOW_MS + GRACE_MS + 1_000;
    const first = await call(`/api/v1/ledger/unaccounted?limit=${PAGE}`, { token: acme });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.total, ACME.length);
    assert.equal(first.body.unaccounted.length, PAGE, 'a full page although the oldest of all is globex’s');
    const all = await call('/api/v1/ledger/unaccounted?limit=200', { token: acme });
    assert.deepEqual(
      all.body.unaccounted.map((u: any) => u.destinationId).sort(),
      ACME.map((n) => `dst-${n}`),
    );
    // Naming one of its own, or another tenant's, as before.
    const own = await call('/api/v1/ledger/unaccounted?destinationId=dst-03', { token: acme });
    assert.deepEqual([own.body.total, own.body.unaccounted[0]?.destinationId], [1, 'dst-03']);
    const other = await call('/api/v1/ledger/unaccounted?destinationId=dst-02', { token: acme });
    assert.deepEqual([other.status, other.body.total], [200, 0]);
    // The admin's answer is unchanged: every destination.
    assert.equal((await call('/api/v1/ledger/unaccounted', { token: ADMIN })).body.total, IDS.length);
  });

  it('sums the ledger of a tenant token over its destinations’ rows alone', async () => {
    const range = `from=${start - 60_000}&to=${start + 60_000}`;
    const { status, body } = await call(`/api/v1/ledger?${range}`, { token: acme });
    assert.equal(status, 200);
    assert.deepEqual(
      body.totals.map((t: any) => [t.sourceId, t.destinationId, t.accepted, t.unaccounted]),
      ACME.map((n) => [`src-${n}`, `dst-${n}`, 1, 1]),
    );
    assert.ok(body.buckets.every((b: any) => ACME.includes(b.destinationId.slice(4))));
  });

  it('never hands an id to another tenant: deleted by acme, a source or destination id is refused to globex and to the admin for globex, taken back by acme', async () => {
    const [acmeOps, globexOps] = [await mintToken('acme', 'manage'), await mintToken('globex', 'manage')];
    for (const kind of KINDS) {
      const id = `${run}-shared`;
      const made = await change('POST', kind.path, { token: acmeOps, body: kind.body(id, 'src-01') });
      assert.equal(made.status, 201, made.text);
      // While acme's is in force, and once it is deleted: globex is answered alike, with nothing of acme's.
      const inForce = await change('POST', kind.path, { token: globexOps, body: kind.body(id, 'src-02') });
      assert.deepEqual([inForce.status, inForce.body.code], [409, 'id_reserved'], inForce.text);
      const gone = await change('DELETE', `${kind.path}/${id}`, { token: acmeOps, ifMatch: '"1"' });
      assert.equal(gone.status, 200, gone.text);
      const refusals = [
        await change('POST', kind.path, { token: globexOps, body: kind.body(id, 'src-02') }),
        await change('POST', kind.path, { token: ADMIN, body: { ...kind.body(id, 'src-02'), tenant: 'globex' } }),
      ];
      for (const refused of refusals) {
        assert.deepEqual([refused.status, refused.body.code], [409, 'id_reserved'], refused.text);
        assert.ok(!refused.text.includes('acme') && !refused.text.includes('version'), refused.text);
      }
      assert.equal((await change('GET', `${kind.path}/${id}`, { token: globexOps })).status, 404);
      const back = await change('POST', kind.path, { token: acmeOps, body: kind.body(id, 'src-01') });
      assert.deepEqual([back.status, back.body[kind.answer].version], [201, 3], back.text);
    }
  });

  it('keeps the audit of a destination or source its tenant deleted its own: changes and actions listed to it, not to another', async () => {
    const [acmeOps, globexOps] = [await mintToken('acme', 'manage'), await mintToken('globex', 'manage')];
    const id = `${run}-gone`;
    const actionsOf = async (token: string) => {
      const listed = await change('GET', '/api/v1/destination-actions?limit=1000', { token });
      assert.equal(listed.status, 200, listed.text);
      return (listed.body.actions as { destinationId: string; action: string }[]).filter((a) => a.destinationId === id);
    };
    for (const kind of KINDS) {
      assert.equal((await change('POST', kind.path, { token: acmeOps, body: kind.body(id, 'src-01') })).status, 201);
      if (kind.answer === 'destination') {
        await waitUntil(
          async () =>
            (await change('POST', `/api/v1/destinations/${id}/pause`, { token: acmeOps, body: { reason: 'upgrade' } }))
              .status === 200,
          10_000,
          'the log pauses the new destination',
        );
        await waitUntil(async () => (await actionsOf(acmeOps)).length === 1, 10_000, 'the log has read the pause');
      }
      assert.equal((await change('DELETE', `${kind.path}/${id}`, { token: acmeOps, ifMatch: '"1"' })).status, 200);
      const one = `${kind.changes}?${kind.idName}=${id}`;
      const own = await change('GET', one, { token: acmeOps });
      assert.deepEqual(
        own.body.changes.map((c: any) => [c.version, c.change, c.by]),
        [
          [2, 'deleted', 'acme-ops'],
          [1, 'created', 'acme-ops'],
        ],
        own.text,
      );
      const all = await change('GET', `${kind.changes}?limit=1000`, { token: acmeOps });
      assert.ok(
        all.body.changes.some((c: any) => c[kind.idName] === id && c.change === 'deleted'),
        all.text,
      );
      for (const path of [one, `${kind.changes}?limit=1000`]) {
        const other = await change('GET', path, { token: globexOps });
        assert.equal(other.status, 200);
        assert.ok(!other.text.includes(id) && !other.text.includes('acme'), other.text);
      }
    }
    assert.deepEqual(
      (await actionsOf(acmeOps)).map((a) => a.action),
      ['pause'],
      'the action on the deleted destination',
    );
    assert.deepEqual(await actionsOf(globexOps), []);
  });

  it('behind a trusted proxy, holds each forwarded client to its own failures; elsewhere ignores the header', async () => {
    const wrong = (r: { from: string; forwardedFor: string }) =>
      call('/api/v1/ledger', { ...r, token: `slt_${randomBytes(32).toString('base64url')}` });
    // 127.0.0.1 is a trusted proxy: the clients are the addresses it forwards.
    const proxied = { from: '127.0.0.1', forwardedFor: '198.51.100.7' };
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await wrong(proxied)).status);
    assert.deepEqual(statuses, [...Array(10).fill(401), 429]);
    assert.equal((await wrong({ from: '127.0.0.1', forwardedFor: '198.51.100.8' })).status, 401, 'another client');
    // A forged hop left of what the proxy appended is the client's own word: it counts against the appended one.
    assert.equal((await wrong({ from: '127.0.0.1', forwardedFor: '203.0.113.1, 198.51.100.7' })).status, 429);
    // Many at once from the limited client: LIMITED_HELD.perClient are held, the rest sent at once, closing their connections.
    const flood = await Promise.all(Array.from({ length: 3 * LIMITED_HELD.perClient }, () => wrong(proxied)));
    assert.ok(
      flood.every((a) => a.status === 429),
      JSON.stringify(flood.map((a) => a.status)),
    );
    const closed = flood.filter((a) => a.connection === 'close').length;
    assert.ok(closed >= 1 && closed < flood.length, `${closed} of ${flood.length} sent at once, closing`);

    // 127.0.0.9 is no trusted proxy: its header is ignored, so every request is the connection's.
    const direct: number[] = [];
    for (let i = 0; i < 11; i++)
      direct.push((await wrong({ from: '127.0.0.9', forwardedFor: `198.51.100.${100 + i}` })).status);
    assert.deepEqual(direct, [...Array(10).fill(401), 429]);
    // A valid token is never held back.
    assert.equal((await call('/api/v1/ledger', { from: '127.0.0.9', token: acme })).status, 200);
  });
});
