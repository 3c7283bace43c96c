import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createKafka, SafeProducer } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { Keyring } from '@sluice/secret-keyring';
import {
  testAttempt,
  testBrokers,
  testConfig,
  testEnvelope,
  testServiceContext,
  uniqueName,
  waitUntil,
} from '@sluice/testkit';
import { openApiDocument } from '../src/adapters/http/openapi.ts';
import { type Scope, scopeOf } from '../src/domain/access-policy.ts';
import { mintPortalLink } from '../src/domain/portal-link.ts';
import { createDeliveryLog, type DeliveryLogService } from '../src/service.ts';
import { OPERATOR_ONLY_ROUTES } from './operator-routes.ts';

const ADMIN = 'matrix-test-admin-token-of-32-characters-or-more';
const KEY_VARIABLE = 'SLUICE_MATRIX_TEST_KEY';
const TENANTS = ['a', 'b'] as const;
type Tenant = (typeof TENANTS)[number];
const endpointOf = (t: Tenant) => `http://127.0.0.1:9/${t}-hook`;

/** What belongs to each tenant: its source, destination, message, batch, and a marker in the event's payload. */
const owned = (t: Tenant) => ({
  sourceId: `${t}-web`,
  destinationId: `${t}-hooks`,
  messageId: `${t}-msg-1`,
  batchId: `${t}-batch-1`,
  marker: `${t.toUpperCase()}-PAYLOAD-MARKER`,
});

/** Every operation of the served OpenAPI document: a new route is in the matrix without a line here. */
const operations = Object.entries(openApiDocument.paths).flatMap(([path, ops]) =>
  Object.keys(ops).map((method) => ({
    method: method.toUpperCase(),
    path,
    scope: scopeOf(method.toUpperCase(), path),
  })),
);

/** The request path of an operation aimed at a tenant's resources (ids that are not a tenant's are made up). */
function pathFor(path: string, t: Tenant): string {
  const ids: Record<string, string> = {
    ...owned(t),
    endpointRef: encodeURIComponent(endpointOf(t)),
    keyId: 'wk_000000000000',
    tokenId: 'tok_0000000000000000',
  };
  // `GET /api/v1/ledger/unaccounted` names no destination: a tenant token's answer covers all of its own.
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => ids[name] ?? `${t}-unknown`);
}

type Caller =
  | { kind: 'none' }
  | { kind: 'wrong' }
  | { kind: 'expired' }
  | { kind: 'expired portal link' }
  | { kind: 'portal link signed by a rotated-out key' }
  | { kind: 'admin' }
  | { kind: 'tenant'; tenant: Tenant; role: 'read' | 'manage' | 'portal'; destination?: string };

/** A second destination of tenant A, which a portal link limited to A's first one never sees. */
const SIDE_DESTINATION = 'a-side-hooks';

/** The callers every route refuses with a 401. */
const REFUSED = new Set<Caller['kind']>([
  'none',
  'wrong',
  'expired',
  'expired portal link',
  'portal link signed by a rotated-out key',
]);

const CALLERS: Caller[] = [
  { kind: 'none' },
  { kind: 'wrong' },
  { kind: 'expired' },
  { kind: 'expired portal link' },
  { kind: 'portal link signed by a rotated-out key' },
  { kind: 'tenant', tenant: 'a', role: 'portal' },
  { kind: 'tenant', tenant: 'a', role: 'portal', destination: owned('a').destinationId },
  { kind: 'tenant', tenant: 'a', role: 'read' },
  { kind: 'tenant', tenant: 'a', role: 'manage' },
  { kind: 'tenant', tenant: 'b', role: 'manage' },
  { kind: 'admin' },
];

const label = (c: Caller) =>
  c.kind !== 'tenant'
    ? c.kind
    : c.role !== 'portal'
      ? `tenant ${c.tenant} ${c.role}`
      : `portal link of ${c.tenant}${c.destination === undefined ? '' : ` limited to ${c.destination}`}`;

/** Whether a role holds a route's scope (the policy's grants, restated as the documented table says them). */
const holds = (role: 'read' | 'manage' | 'portal', op: { method: string; path: string; scope: Scope | undefined }) =>
  (role !== 'portal' || !OPERATOR_ONLY_ROUTES.has(`${op.method} ${op.path}`)) &&
  (op.scope === 'tenant:read' || (op.scope === 'tenant:manage' && role !== 'read'));

/**
 * The authorization matrix (docs/reference/tokens.md, tenants.md), generated from the OpenAPI
 * document: every route × {no token, a wrong one, an expired one, tenant A read, tenant A manage,
 * tenant B manage, admin} × {a resource of A, a resource of B}, on the real delivery log with its
 * real database (embedded) and real Kafka. Each answer is the documented one, and no answer to a
 * tenant's token holds a byte of the other tenant's ids, payload or token names.
 */
describe('delivery-log authorization matrix', { timeout: 300_000 }, () => {
  const config = testConfig({
    sources: TENANTS.map((t) => ({ id: owned(t).sourceId, tenant: `tenant-${t}`, writeKeys: [`${t}-write-key`] })),
    destinations: [
      ...TENANTS.map((t) => ({
        id: owned(t).destinationId,
        tenant: `tenant-${t}`,
        type: 'webhooks',
        sourceIds: [owned(t).sourceId],
        settings: { webhooks: [{ url: endpointOf(t) }] },
      })),
      {
        id: SIDE_DESTINATION,
        tenant: 'tenant-a',
        type: 'webhooks',
        sourceIds: [owned('a').sourceId],
        settings: { webhooks: [{ url: 'http://127.0.0.1:9/a-side-hook' }] },
      },
    ],
    deliveryLog: { adminToken: ADMIN },
    runtimeDestinations: { keyring: [{ id: 'k1', key: { env: KEY_VARIABLE } }] },
  });
  const logger = createLogger({ name: 'matrix-test', level: 'error' });
  const kafka = createKafka({ brokers: testBrokers(), clientId: uniqueName('matrix-test'), logger });
  const producer = new SafeProducer(kafka);
  let clock = Date.now();
  let service: DeliveryLogService;
  const tokens = new Map<string, string>();
  let client = 0;

  /** One request, from its own loopback address so the failed-authentication limit of one address is not reached. */
  const call = (r: { method: string; path: string; token?: string }) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      client = (client % 250) + 1;
      const req = request(
        {
          host: '127.0.0.1',
          port: service.port,
          method: r.method,
          path: r.path,
          localAddress: `127.0.1.${client}`,
          headers: r.token === undefined ? {} : { authorization: `Bearer ${r.token}` },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8') }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  const admin = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`http://127.0.0.1:${service.port}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text) as { secret: string };
  };
  const tokenOf = (c: Caller): string | undefined =>
    c.kind === 'none'
      ? undefined
      : c.kind === 'wrong'
        ? `slt_${randomBytes(32).toString('base64url')}`
        : c.kind === 'admin'
          ? ADMIN
          : c.kind === 'tenant'
            ? tokens.get(`${c.tenant}-${c.role}${c.destination === undefined ? '' : `-${c.destination}`}`)
            : tokens.get(c.kind);

  before(async () => {
    process.env[KEY_VARIABLE] = randomBytes(32).toString('hex');
    await producer.connect();
    service = await createDeliveryLog(testServiceContext('delivery-log', config), {
      port: 0,
      now: () => clock,
    }).start();
    const t = config.kafka.topics;
    const now = Date.now();
    for (const tenant of TENANTS) {
      const { sourceId, destinationId, messageId, batchId, marker } = owned(tenant);
      const envelope = testEnvelope({
        sourceId,
        messageId,
        properties: { marker },
        receivedAt: new Date(now).toISOString(),
      });
      await producer.send(t.events, [{ key: `${sourceId}:u1`, value: JSON.stringify(envelope) }]);
      const attempt = testAttempt({
        sourceId,
        messageId,
        destinationId,
        endpoint: endpointOf(tenant),
        status: 200,
        at: new Date(now + 100).toISOString(),
        batchId,
        batchSize: 1,
      });
      await producer.send(t.attempts, [{ key: `${sourceId}:u1`, value: JSON.stringify(attempt) }]);
    }
    await waitUntil(
      async () =>
        (await call({ method: 'GET', path: `/api/v1/batches/${owned('b').batchId}`, token: ADMIN })).status === 200 &&
        (await call({ method: 'GET', path: `/api/v1/batches/${owned('a').batchId}`, token: ADMIN })).status === 200,
      30_000,
      "both tenants' events and attempts in the log",
    );
    for (const tenant of TENANTS)
      for (const role of ['read', 'manage'] as const) {
        const created = await admin('POST', '/api/v1/tokens', {
          name: `${tenant}-${role}-token`,
          tenant: `tenant-${tenant}`,
          role,
        });
        tokens.set(`${tenant}-${role}`, created.secret);
      }
    const expiring = await admin('POST', '/api/v1/tokens', {
      name: 'a-expiring-token',
      tenant: 'tenant-a',
      role: 'manage',
      expiresAt: new Date(clock + 60_000).toISOString(),
    });
    tokens.set('expired', expiring.secret);
    const link = await admin('POST', '/api/v1/portal-links', { tenant: 'tenant-a', ttlMs: 24 * 3_600_000 });
    tokens.set('a-portal', (link as unknown as { token: string }).token);
    const limited = await admin('POST', '/api/v1/portal-links', {
      tenant: 'tenant-a',
      destinationId: owned('a').destinationId,
      ttlMs: 24 * 3_600_000,
    });
    tokens.set(`a-portal-${owned('a').destinationId}`, (limited as unknown as { token: string }).token);
    const expiringLink = await admin('POST', '/api/v1/portal-links', { tenant: 'tenant-a', ttlMs: 60_000 });
    tokens.set('expired portal link', (expiringLink as unknown as { token: string }).token);
    const rotatedOut = new Keyring([{ id: 'k0', key: randomBytes(32) }]);
    const grant = {
      tenant: 'tenant-a',
      mintedBy: 'admin',
      id: 'rotatedout01',
      issuedAt: clock,
      expiresAt: clock + 3_600_000,
    };
    tokens.set(
      'portal link signed by a rotated-out key',
      mintPortalLink({ keyring: rotatedOut, now: () => clock }, grant),
    );
    clock += 120_000;
  });
  after(async () => {
    await producer.disconnect();
    await service?.close();
  });

  it('covers every documented route', () => {
    assert.ok(operations.length >= 39, `${operations.length} operations`);
    for (const op of operations) assert.ok(op.scope !== undefined, `${op.method} ${op.path} has a scope`);
  });

  for (const caller of CALLERS)
    it(`answers ${label(caller)} as documented on every route, with nothing of another tenant`, async () => {
      const failures: string[] = [];
      for (const op of operations)
        for (const owner of TENANTS) {
          const path = pathFor(op.path, owner);
          const { status, text } = await call({ method: op.method, path, token: tokenOf(caller) });
          const where = `${op.method} ${path} as ${label(caller)}: ${status} ${text.slice(0, 200)}`;
          const expect = (ok: boolean) => ok || failures.push(where);
          if (caller.kind !== 'admin' && caller.kind !== 'tenant') {
            expect(status === 401 && REFUSED.has(caller.kind));
            continue;
          }
          expect(status < 500 && status !== 401 && status !== 429);
          if (caller.kind === 'admin') {
            expect(status !== 403);
            if (op.method === 'GET' && !op.path.includes('{tokenId}') && !op.path.includes('{keyId}'))
              expect(status === 200);
            continue;
          }
          if (!holds(caller.role, op)) {
            expect(status === 403);
            continue;
          }
          expect(status !== 403);
          const pathNamesResource = /\{(sourceId|destinationId)\}/.test(op.path);
          if (owner !== caller.tenant && pathNamesResource) expect(status === 404);
          // Its own resource is there for it to read.
          if (owner === caller.tenant && pathNamesResource && op.method === 'GET') expect(status === 200);
          if (owner === caller.tenant && op.path === '/api/v1/batches/{batchId}') expect(status === 200);
          const other = owned(caller.tenant === 'a' ? 'b' : 'a');
          const otherTenant = caller.tenant === 'a' ? 'b' : 'a';
          for (const secret of [
            other.sourceId,
            other.destinationId,
            other.messageId,
            other.batchId,
            other.marker,
            `tenant-${otherTenant}`,
            `${otherTenant}-read-token`,
            `${otherTenant}-manage-token`,
            // A link limited to one destination sees nothing of the tenant's other one.
            ...(caller.role === 'portal' && caller.destination !== undefined ? [SIDE_DESTINATION] : []),
          ])
            if (text.includes(secret)) failures.push(`${where} — holds ${secret}`);
        }
      assert.deepEqual(failures, []);
    });
});
