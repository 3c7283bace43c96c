import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { createKafka } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { readTopic, testBrokers, testConfig, testServiceContext, uniqueName, waitUntil } from '@sluice/testkit';
import { openApiDocument } from '../src/adapters/http/openapi.ts';
import { createDeliveryLog, type DeliveryLogService } from '../src/service.ts';

const TOKEN = 'control-test-token-of-32-characters-or-more';
const LONG_URL = `http://127.0.0.1:9/${'p'.repeat(300)}`;

/**
 * Destination control through the API on the real broker: every answer checked against the served
 * OpenAPI document, the records on the state topic keyed and valued as documented, and a second
 * delivery log (a fresh replica, or the first after a restart) seeing the same states and actions.
 */
describe('delivery-log destination control API', { timeout: 120_000 }, () => {
  const config = testConfig({
    sources: [{ id: 'web', writeKeys: ['k'] }],
    destinations: [
      {
        id: 'hooks',
        type: 'webhooks',
        sourceIds: ['web'],
        settings: { webhooks: [{ url: 'http://127.0.0.1:9/a' }, { url: 'http://127.0.0.1:9/b' }] },
      },
      { id: 'other', type: 'webhooks', settings: { webhooks: [{ url: 'http://127.0.0.1:9/c' }] } },
      // A ref longer than an id's 200 characters: auto-disable can name it, so the API must too.
      { id: 'long', type: 'webhooks', settings: { webhooks: [{ url: LONG_URL }] } },
    ],
    deliveryLog: { adminToken: TOKEN },
  });
  const logger = createLogger({ name: 'control-api-test', level: 'error' });
  const kafka = createKafka({ brokers: testBrokers(), clientId: uniqueName('control-api-test'), logger });
  const services: DeliveryLogService[] = [];
  const start = async () => {
    const s = await createDeliveryLog(testServiceContext('delivery-log', config), { port: 0 }).start();
    services.push(s);
    return s;
  };
  const call = async (s: DeliveryLogService, method: string, path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${s.port}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addSchema({ $id: 'openapi', components: openApiDocument.components });
  const conforms = (schema: string, value: unknown) => {
    const validate = ajv.getSchema(`openapi#/components/schemas/${schema}`)!;
    assert.ok(validate(value), `${schema}: ${ajv.errorsText(validate.errors)}`);
  };
  const refA = encodeURIComponent('http://127.0.0.1:9/a');
  let first: DeliveryLogService;

  before(async () => {
    first = await start();
  });
  after(async () => {
    for (const s of services) await s.close();
  });

  it('lists every destination and endpoint as active before any action', async () => {
    const list = await call(first, 'GET', '/api/v1/destinations');
    assert.equal(list.status, 200);
    conforms('Destinations', list.body);
    const hooks = list.body.destinations[0];
    assert.deepEqual(hooks.state, { state: 'active', reason: null, by: null, since: null, auto: false });
    assert.deepEqual(
      hooks.endpointStates.map((e: { ref: string; state: string }) => [e.ref, e.state]),
      [
        ['http://127.0.0.1:9/a', 'active'],
        ['http://127.0.0.1:9/b', 'active'],
      ],
    );
  });

  it('pauses a destination and disables an endpoint, writing the documented records, listed newest first', async () => {
    const paused = await call(first, 'POST', '/api/v1/destinations/hooks/pause', { reason: 'maintenance', by: 'ana' });
    assert.equal(paused.status, 200);
    conforms('ControlResult', paused.body);
    assert.equal(paused.body.state, 'paused');
    assert.equal(paused.body.by, 'admin', "the token's name, never the body's word");
    assert.deepEqual([paused.body.action.by, paused.body.action.byTokenId], ['admin', 'admin']);
    const disabled = await call(first, 'POST', `/api/v1/destinations/hooks/endpoints/${refA}/disable`, {
      reason: 'customer asked',
    });
    assert.equal(disabled.status, 200);
    conforms('ControlResult', disabled.body);
    assert.equal(disabled.body.by, 'admin', "the admin token's name");

    const records = await readTopic(kafka, config.kafka.topics.destinationState, { count: 2 });
    const byKey = new Map(records.map((r) => [r.key, JSON.parse(r.value!.toString())]));
    assert.deepEqual(Object.keys(byKey.get('hooks')).sort(), ['at', 'by', 'reason', 'state']);
    assert.equal(byKey.get('hooks').state, 'paused');
    assert.equal(byKey.get('hooks/http://127.0.0.1:9/a').state, 'disabled');

    const list = await call(first, 'GET', '/api/v1/destinations');
    conforms('Destinations', list.body);
    assert.equal(list.body.destinations[0].state.state, 'paused');
    assert.equal(list.body.destinations[0].state.reason, 'maintenance');
    assert.equal(list.body.destinations[0].endpointStates[0].state, 'disabled');
    assert.equal(list.body.destinations[0].endpointStates[1].state, 'active');
    assert.equal(list.body.destinations[1].state.state, 'active');

    await waitUntil(
      async () => (await call(first, 'GET', '/api/v1/destination-actions')).body.actions.length === 2,
      10_000,
      'both actions listed',
    );
    const actions = await call(first, 'GET', '/api/v1/destination-actions?limit=10');
    conforms('ControlActions', actions.body);
    assert.deepEqual(
      actions.body.actions.map((a: { action: string; endpointRef?: string; by: string; byTokenId: string }) => [
        a.action,
        a.endpointRef ?? null,
        a.by,
        a.byTokenId,
      ]),
      [
        ['disable', 'http://127.0.0.1:9/a', 'admin', 'admin'],
        ['pause', null, 'admin', 'admin'],
      ],
    );
    assert.equal(actions.body.nextCursor, null);
    // A page of one, then the next from its cursor.
    const one = await call(first, 'GET', '/api/v1/destination-actions?limit=1');
    assert.equal(one.body.actions[0].action, 'disable');
    const next = await call(first, 'GET', `/api/v1/destination-actions?limit=1&cursor=${one.body.nextCursor}`);
    conforms('ControlActions', next.body);
    assert.deepEqual([next.body.actions[0].action, next.body.nextCursor], ['pause', null]);
  });

  it('refuses unknown destinations and endpoints (404) and bad bodies (400 naming the field)', async () => {
    const cases: [string, unknown, number, string?][] = [
      ['/api/v1/destinations/nope/pause', { reason: 'x' }, 404],
      ['/api/v1/destinations/hooks/endpoints/nope/pause', { reason: 'x' }, 404],
      ['/api/v1/destinations/hooks/pause', {}, 400, 'reason'],
      ['/api/v1/destinations/hooks/pause', { reason: '   ' }, 400, 'reason'],
      ['/api/v1/destinations/hooks/pause', { reason: 'x', why: 'y' }, 400, 'why'],
      ['/api/v1/destinations/hooks/pause', { reason: 'x', by: 7 }, 400, 'by'],
      ['/api/v1/destinations/hooks/pause', [], 400],
    ];
    for (const [path, body, status, field] of cases) {
      const r = await call(first, 'POST', path, body);
      assert.equal(r.status, status, `${path} ${JSON.stringify(body)}`);
      conforms('Error', r.body);
      if (field) assert.equal(r.body.field, field);
    }
    const badLimit = await call(first, 'GET', '/api/v1/destination-actions?limit=0');
    assert.equal(badLimit.status, 400);
    assert.equal(badLimit.body.field, 'limit');
    const wrongMethod = await call(first, 'GET', '/api/v1/destinations/hooks/pause');
    assert.equal(wrongMethod.status, 405);
  });

  it('a second replica (or a restart) starts with the same states and lists the actions; resume and enable make them active again', async () => {
    const second = await start();
    const stateOf = async (s: DeliveryLogService) =>
      (await call(s, 'GET', '/api/v1/destinations')).body.destinations[0];
    // Its start read the states that were there: it answers with them at once.
    assert.equal((await stateOf(second)).state.state, 'paused');
    assert.equal((await stateOf(second)).endpointStates[0].state, 'disabled');
    await waitUntil(
      async () => (await call(second, 'GET', '/api/v1/destination-actions')).body.actions.length === 2,
      10_000,
      'the replica lists the actions',
    );
    // An action through one replica reaches the other within seconds.
    assert.equal((await call(second, 'POST', '/api/v1/destinations/hooks/resume', { reason: 'done' })).status, 200);
    assert.equal(
      (await call(second, 'POST', `/api/v1/destinations/hooks/endpoints/${refA}/enable`, { reason: 'fixed' })).status,
      200,
    );
    await waitUntil(
      async () => {
        const d = await stateOf(first);
        return d.state.state === 'active' && d.endpointStates[0].state === 'active';
      },
      10_000,
      'the first replica sees the resume and the enable',
    );
    assert.equal((await stateOf(first)).state.by, 'admin');
    assert.equal((await stateOf(first)).state.reason, 'done');
  });

  it('an endpoint whose ref is longer than 200 characters can be disabled and enabled again', async () => {
    const ref = encodeURIComponent(LONG_URL);
    const disabled = await call(first, 'POST', `/api/v1/destinations/long/endpoints/${ref}/disable`, { reason: 'x' });
    assert.equal(disabled.status, 200, JSON.stringify(disabled.body));
    const enabled = await call(first, 'POST', `/api/v1/destinations/long/endpoints/${ref}/enable`, { reason: 'back' });
    assert.equal(enabled.status, 200, JSON.stringify(enabled.body));
    assert.equal(enabled.body.state, 'active');
    // Past the longest ref the config can give, a 400 naming the parameter (not a 404 after a lookup).
    const tooLong = await call(first, 'POST', `/api/v1/destinations/long/endpoints/${'p'.repeat(1_001)}/enable`, {
      reason: 'x',
    });
    assert.equal(tooLong.status, 400);
    assert.equal(tooLong.body.field, 'endpointRef');
  });
});
