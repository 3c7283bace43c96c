import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { sourcesAnswer } from '@sluice/log-api';
import { testConfig, testServiceContext } from '@sluice/testkit';
import { openApiDocument } from '../src/adapters/http/openapi.ts';
import { createDeliveryLog, type DeliveryLogService } from '../src/service.ts';

const TOKEN = 'sources-test-token-of-32-characters-or-more';
const KEY_VARIABLE = 'SLUICE_SOURCES_TEST_KEY';
const BASE = '/api/v1/source-definitions';

/**
 * The runtime sources' API on the real broker (docs/reference/runtime-sources.md, "API"): every
 * answer checked against the served OpenAPI document, no key shown but once, no digest ever; a
 * second delivery log without `runtimeDestinations` lists the file's sources and refuses changes.
 */
describe('delivery-log runtime sources API', { timeout: 120_000 }, () => {
  const file = {
    sources: [{ id: 'web', name: 'Web', writeKeys: ['file-write-key'] }],
    destinations: [
      { id: 'orders', type: 'webhooks', sourceIds: ['web'], settings: { webhookUrl: 'https://o.example/' } },
    ],
    deliveryLog: { adminToken: TOKEN },
  };
  const services: DeliveryLogService[] = [];
  let on: DeliveryLogService;
  let off: DeliveryLogService;
  /** Every key minted, and its digest: no answer but the one that minted it may hold either. */
  const secrets: string[] = ['file-write-key'];
  const call = async (
    s: DeliveryLogService,
    request: { method: string; path: string; body?: unknown; ifMatch?: string },
  ) => {
    const res = await fetch(`http://127.0.0.1:${s.port}${request.path}`, {
      method: request.method,
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/json',
        ...(request.ifMatch !== undefined && { 'if-match': request.ifMatch }),
      },
      ...(request.body !== undefined && { body: JSON.stringify(request.body) }),
    });
    const text = await res.text();
    return { status: res.status, etag: res.headers.get('etag'), body: JSON.parse(text) as any, text };
  };
  /** Keeps a key an answer minted, and checks the other answers hold none. */
  const keep = (key: string) => secrets.push(key, createHash('sha256').update(key).digest('hex'));
  const noSecret = (text: string) => {
    for (const secret of secrets) assert.ok(!text.includes(secret), 'no key or digest shown');
  };
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addSchema({ $id: 'openapi', components: openApiDocument.components });
  const conforms = (schema: string, value: unknown) => {
    const validate = ajv.getSchema(`openapi#/components/schemas/${schema}`)!;
    assert.ok(validate(value), `${schema}: ${ajv.errorsText(validate.errors)}`);
  };

  before(async () => {
    process.env[KEY_VARIABLE] = randomBytes(32).toString('hex');
    const config = testConfig({
      ...file,
      runtimeDestinations: { keyring: [{ id: 'k1', key: { env: KEY_VARIABLE } }] },
    });
    on = await createDeliveryLog(testServiceContext('delivery-log', config), { port: 0 }).start();
    services.push(on);
    off = await createDeliveryLog(testServiceContext('delivery-log', testConfig(file)), { port: 0 }).start();
    services.push(off);
  });
  after(async () => {
    for (const s of services) await s.close();
  });

  it('creates (201, ETag, the write key once), then reads it back: key ids and times only', async () => {
    const created = await call(on, { method: 'POST', path: BASE, body: { id: 'shop', name: 'Shop' } });
    assert.equal(created.status, 201, created.text);
    conforms('SourceWritten', created.body);
    assert.equal(created.etag, '"1"');
    assert.equal(created.body.source.updatedBy, 'admin');
    const { writeKey } = created.body;
    assert.match(writeKey.key, /^sk_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(created.body.source.writeKeys, [{ id: writeKey.id, createdAt: writeKey.createdAt }]);
    keep(writeKey.key);
    const read = await call(on, { method: 'GET', path: `${BASE}/shop` });
    assert.equal(read.status, 200);
    conforms('Source', read.body);
    assert.equal(read.etag, '"1"');
    assert.equal(read.body.origin, 'runtime');
    noSecret(read.text);
    const list = await call(on, { method: 'GET', path: `${BASE}?limit=1` });
    conforms('Sources', list.body);
    assert.equal(sourcesAnswer.mismatch(list.body), undefined, 'the answer has the type @sluice/log-api gives it');
    assert.deepEqual(
      list.body.sources.map((s: { id: string; origin: string }) => [s.id, s.origin]),
      [['shop', 'runtime']],
    );
    const rest = await call(on, { method: 'GET', path: `${BASE}?cursor=${list.body.nextCursor}` });
    assert.deepEqual(rest.body.sources, [
      { origin: 'file', id: 'web', name: 'Web', tenant: 'default', file: '(the config given at start)' },
    ]);
    noSecret(list.text + rest.text);
  });

  it('refuses a file-declared id (409 naming the file), an invalid id, a key given (400 naming the field)', async () => {
    const declared = await call(on, { method: 'POST', path: BASE, body: { id: 'web' } });
    assert.equal(declared.status, 409);
    assert.equal(declared.body.code, 'file_declared');
    assert.match(declared.body.message, /config file/);
    const invalid = await call(on, { method: 'POST', path: BASE, body: { id: 'a b' } });
    assert.equal(invalid.status, 400);
    assert.equal(invalid.body.field, 'id');
    const given = await call(on, { method: 'POST', path: BASE, body: { id: 'x', writeKeys: ['mine'] } });
    assert.equal(given.status, 400);
    assert.equal(given.body.field, 'writeKeys');
    const taken = await call(on, { method: 'POST', path: BASE, body: { id: 'shop' } });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.code, 'id_taken');
    const fileRename = await call(on, { method: 'PATCH', path: `${BASE}/web`, body: { name: 'x' }, ifMatch: '"1"' });
    assert.equal(fileRename.status, 409);
    assert.match(fileRename.body.message, /declared in the config file/);
  });

  it('mints (201, the new key once), takes one of two renames on one version (the other 412), none without If-Match (428)', async () => {
    const minted = await call(on, { method: 'POST', path: `${BASE}/shop/write-keys`, ifMatch: '"1"' });
    assert.equal(minted.status, 201, minted.text);
    conforms('SourceWritten', minted.body);
    assert.equal(minted.etag, '"2"');
    assert.equal(minted.body.source.writeKeys.length, 2);
    keep(minted.body.writeKey.key);
    const rename = (name: string) =>
      call(on, { method: 'PATCH', path: `${BASE}/shop`, body: { name }, ifMatch: '"2"' });
    const answers = await Promise.all([rename('Shop EU'), rename('Shop US')]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 412], answers.map((a) => a.text).join());
    const won = answers.find((a) => a.status === 200)!;
    conforms('SourceWritten', won.body);
    assert.equal(won.body.writeKey, undefined, 'no key shown again');
    noSecret(won.text);
    assert.equal((await call(on, { method: 'POST', path: `${BASE}/shop/write-keys` })).status, 428);
    const other = await call(on, { method: 'PATCH', path: `${BASE}/shop`, body: { id: 'x' }, ifMatch: '"3"' });
    assert.equal(other.status, 400);
    assert.equal(other.body.field, 'id');
  });

  it('refuses to delete a source a destination names (409, naming it); revokes a key (200), not twice (409), not an unknown one (404)', async () => {
    const crm = {
      id: 'crm',
      type: 'webhooks',
      sourceIds: ['shop'],
      settings: { webhookUrl: 'https://crm.example/in' },
    };
    const destination = await call(on, { method: 'POST', path: '/api/v1/destination-definitions', body: crm });
    assert.equal(destination.status, 201, destination.text);
    const inUse = await call(on, { method: 'DELETE', path: `${BASE}/shop`, ifMatch: '"3"' });
    assert.equal(inUse.status, 409);
    assert.equal(inUse.body.code, 'source_in_use');
    assert.match(inUse.body.message, /crm/);
    const gone = await call(on, { method: 'DELETE', path: '/api/v1/destination-definitions/crm', ifMatch: '"1"' });
    assert.equal(gone.status, 200);

    const read = await call(on, { method: 'GET', path: `${BASE}/shop` });
    const keyId = read.body.writeKeys[0].id;
    const revoked = await call(on, { method: 'DELETE', path: `${BASE}/shop/write-keys/${keyId}`, ifMatch: '"3"' });
    assert.equal(revoked.status, 200, revoked.text);
    conforms('SourceWritten', revoked.body);
    assert.ok(revoked.body.source.writeKeys[0].revokedAt);
    const again = await call(on, { method: 'DELETE', path: `${BASE}/shop/write-keys/${keyId}`, ifMatch: '"4"' });
    assert.equal(again.status, 409);
    assert.equal(again.body.code, 'already_revoked');
    const unknown = await call(on, { method: 'DELETE', path: `${BASE}/shop/write-keys/wk_nope`, ifMatch: '"4"' });
    assert.equal(unknown.status, 404);
  });

  it('deletes with If-Match, after which the id reads 404; the audit lists every change by name, no key', async () => {
    const stale = await call(on, { method: 'DELETE', path: `${BASE}/shop`, ifMatch: '"1"' });
    assert.equal(stale.status, 412);
    const deleted = await call(on, { method: 'DELETE', path: `${BASE}/shop`, ifMatch: '"4"' });
    assert.equal(deleted.status, 200, deleted.text);
    conforms('SourceDeleted', deleted.body);
    assert.deepEqual(deleted.body, { id: 'shop', version: 5 });
    assert.equal((await call(on, { method: 'GET', path: `${BASE}/shop` })).status, 404);

    const audit = await call(on, { method: 'GET', path: '/api/v1/source-changes?sourceId=shop' });
    assert.equal(audit.status, 200);
    conforms('SourceChanges', audit.body);
    const changes = audit.body.changes as { version: number; change: string; fields: string[] }[];
    assert.deepEqual(
      changes.map((c) => [c.version, c.change]),
      [
        [5, 'deleted'],
        [4, 'key_revoked'],
        [3, 'renamed'],
        [2, 'key_minted'],
        [1, 'created'],
      ],
    );
    assert.match(changes[1]!.fields[0]!, /^writeKeys\.wk_[0-9a-f]{12}\.revokedAt$/);
    assert.deepEqual(changes[2]!.fields, ['name']);
    noSecret(audit.text);
  });

  it('without runtimeDestinations, lists the file’s sources (never a key) and refuses changes with 409', async () => {
    const list = await call(off, { method: 'GET', path: BASE });
    conforms('Sources', list.body);
    assert.deepEqual(
      list.body.sources.map((s: { id: string; origin: string }) => [s.id, s.origin]),
      [['web', 'file']],
    );
    noSecret(list.text);
    const created = await call(off, { method: 'POST', path: BASE, body: { id: 'shop' } });
    assert.equal(created.status, 409);
    assert.equal(created.body.code, 'runtime_sources_off');
  });
});
