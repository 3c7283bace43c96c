import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { testConfig, testServiceContext } from '@sluice/testkit';
import { openApiDocument } from '../src/adapters/http/openapi.ts';
import { createDeliveryLog, type DeliveryLogService } from '../src/service.ts';

const TOKEN = 'definitions-test-token-of-32-characters-or-more';
const KEY_VARIABLE = 'SLUICE_DEFINITIONS_TEST_KEY';
const BASE = '/api/v1/destination-definitions';

/**
 * The runtime destinations' API on the real broker (docs/reference/runtime-destinations.md, "API"):
 * every answer checked against the served OpenAPI document; a second delivery log without
 * `runtimeDestinations` lists the file's destinations and refuses changes.
 */
describe('delivery-log runtime destinations API', { timeout: 120_000 }, () => {
  const file = {
    sources: [{ id: 'web', writeKeys: ['k'] }],
    destinations: [
      { id: 'orders', type: 'webhooks', sourceIds: ['web'], settings: { webhookUrl: 'https://o.example/' } },
    ],
    deliveryLog: { adminToken: TOKEN },
  };
  const services: DeliveryLogService[] = [];
  let on: DeliveryLogService;
  let off: DeliveryLogService;
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
    return { status: res.status, etag: res.headers.get('etag'), body: (await res.json()) as any };
  };
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addSchema({ $id: 'openapi', components: openApiDocument.components });
  const conforms = (schema: string, value: unknown) => {
    const validate = ajv.getSchema(`openapi#/components/schemas/${schema}`)!;
    assert.ok(validate(value), `${schema}: ${ajv.errorsText(validate.errors)}`);
  };
  const crm = (urls: string[]) => ({
    id: 'crm',
    type: 'webhooks',
    sourceIds: ['web'],
    settings: { webhooks: urls.map((url) => ({ url, headers: { authorization: 'Bearer crm-secret' } })) },
  });

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

  it('creates (201, ETag, the generated secret once), then reads it back redacted', async () => {
    const created = await call(on, { method: 'POST', path: BASE, body: crm(['https://crm.example/a']) });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    conforms('DefinitionWritten', created.body);
    assert.equal(created.etag, '"1"');
    assert.equal(created.body.destination.updatedBy, 'admin');
    assert.equal(created.body.secrets.length, 1);
    assert.match(created.body.secrets[0].secret, /^[0-9a-f]{64}$/);
    const read = await call(on, { method: 'GET', path: `${BASE}/crm` });
    assert.equal(read.status, 200);
    conforms('Definition', read.body);
    assert.equal(read.etag, '"1"');
    assert.equal(read.body.origin, 'runtime');
    const text = JSON.stringify(read.body);
    for (const secret of ['crm.example', 'crm-secret', created.body.secrets[0].secret])
      assert.ok(!text.includes(secret));
    const list = await call(on, { method: 'GET', path: `${BASE}?sourceId=web` });
    conforms('Definitions', list.body);
    assert.deepEqual(
      list.body.definitions.map((d: { id: string; origin: string }) => [d.id, d.origin]),
      [
        ['crm', 'runtime'],
        ['orders', 'file'],
      ],
    );
  });

  it('takes one of two replaces made on the same version (200), the other 412; none without If-Match (428)', async () => {
    const put = (url: string) => call(on, { method: 'PUT', path: `${BASE}/crm`, body: crm([url]), ifMatch: '"1"' });
    const answers = await Promise.all([put('https://crm.example/b'), put('https://crm.example/c')]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 412], JSON.stringify(answers.map((a) => a.body)));
    const won = answers.find((a) => a.status === 200)!;
    conforms('DefinitionWritten', won.body);
    assert.equal(won.etag, '"2"');
    assert.deepEqual(won.body.secrets, [], 'the signing secret is kept');
    const missing = await call(on, { method: 'PUT', path: `${BASE}/crm`, body: crm(['https://crm.example/d']) });
    assert.equal(missing.status, 428);
    const patched = await call(on, { method: 'PATCH', path: `${BASE}/crm`, body: { enabled: false }, ifMatch: '"2"' });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.destination.definition.enabled, false);
    const rotated = await call(on, { method: 'POST', path: `${BASE}/crm/rotate-secret`, body: {}, ifMatch: '"3"' });
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    assert.equal(rotated.body.secrets.length, 1);
  });

  it('refuses a file-declared id (409 naming the file), an invalid body (400 naming the field), six endpoints and a refused address (400)', async () => {
    const declared = await call(on, {
      method: 'POST',
      path: BASE,
      body: { ...crm(['https://x.example/']), id: 'orders' },
    });
    assert.equal(declared.status, 409);
    assert.match(declared.body.message, /config file/);
    const invalid = await call(on, {
      method: 'POST',
      path: BASE,
      body: { ...crm(['https://x.example/']), id: 'b', sourceIds: ['nope'] },
    });
    assert.equal(invalid.status, 400);
    assert.equal(invalid.body.field, 'sourceIds[0]');
    const six = Array.from({ length: 6 }, (_, i) => `https://h${i}.example/`);
    const many = await call(on, { method: 'POST', path: BASE, body: { ...crm(six), id: 'many' } });
    assert.equal(many.status, 400);
    assert.equal(many.body.field, 'settings.webhooks');
    const metadata = await call(on, {
      method: 'POST',
      path: BASE,
      body: { ...crm(['http://169.254.169.254/']), id: 'meta' },
    });
    assert.equal(metadata.status, 400);
    assert.equal(metadata.body.field, 'settings.webhooks[0].url');
    assert.match(metadata.body.message, /SSRF/);
  });

  it('deletes with If-Match, after which the id reads 404', async () => {
    const stale = await call(on, { method: 'DELETE', path: `${BASE}/crm`, ifMatch: '"1"' });
    assert.equal(stale.status, 412);
    const deleted = await call(on, { method: 'DELETE', path: `${BASE}/crm`, ifMatch: '"4"' });
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    conforms('DefinitionDeleted', deleted.body);
    assert.equal((await call(on, { method: 'GET', path: `${BASE}/crm` })).status, 404);
  });

  it('lists every change in the audit, newest first: who, when, the fields it changed, no value', async () => {
    const audit = await call(on, { method: 'GET', path: '/api/v1/destination-changes?destinationId=crm' });
    assert.equal(audit.status, 200);
    conforms('DefinitionChanges', audit.body);
    assert.deepEqual(
      audit.body.changes.map((c: { version: number; change: string; by: string }) => [c.version, c.change, c.by]),
      [
        [5, 'deleted', 'admin'],
        [4, 'rotated', 'admin'],
        [3, 'updated', 'admin'],
        [2, 'updated', 'admin'],
        [1, 'created', 'admin'],
      ],
    );
    assert.deepEqual(audit.body.changes[2].fields, ['enabled']);
    assert.deepEqual(audit.body.changes[3].fields, ['settings.webhooks[0].url']);
    assert.ok(!JSON.stringify(audit.body).includes('crm.example'), 'names only, no value');
  });

  it('without runtimeDestinations, lists the file and refuses changes with 409', async () => {
    const list = await call(off, { method: 'GET', path: BASE });
    assert.deepEqual(
      list.body.definitions.map((d: { origin: string }) => d.origin),
      ['file'],
    );
    const created = await call(off, { method: 'POST', path: BASE, body: crm(['https://crm.example/a']) });
    assert.equal(created.status, 409);
    assert.equal(created.body.code, 'runtime_destinations_off');
  });
});
