import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { retryStateFromHeaders, retryStateToHeaders } from '@sluice/envelope';
import { createKafka, SafeProducer } from '@sluice/kafka';
import { ledgerAnswer, unaccountedAnswer } from '@sluice/log-api';
import { createLogger } from '@sluice/logging';
import {
  readTopic,
  testAttempt,
  testBrokers,
  testConfig,
  testEnvelope,
  testServiceContext,
  uniqueName,
  waitUntil,
} from '@sluice/testkit';
import { openDatabase, type Sql } from '../src/adapters/db/database.ts';
import { openApiDocument } from '../src/adapters/http/openapi.ts';
import { createDeliveryLog, type DeliveryLogService } from '../src/service.ts';

const TOKEN = 'api-test-token-of-32-characters-or-more';
const DAY = 24 * 3_600_000;

/**
 * The service in-process on the real broker with the embedded database: records written straight
 * onto the topics, the API asked, every answer checked against the served OpenAPI document.
 */
describe('delivery-log API', { timeout: 120_000 }, () => {
  const config = testConfig({
    sources: [{ id: 'web', writeKeys: ['k'] }],
    destinations: [
      { id: 'hooks', type: 'webhooks', sourceIds: ['web'], settings: { webhooks: [{ url: 'http://127.0.0.1:9/a' }] } },
    ],
    deliveryLog: { adminToken: TOKEN, retention: '48h' },
  });
  const logger = createLogger({ name: 'api-test', level: 'error' });
  const kafka = createKafka({ brokers: testBrokers(), clientId: uniqueName('api-test'), logger });
  const producer = new SafeProducer(kafka);
  let clock = Date.now();
  let service: DeliveryLogService;
  let sql: Sql;
  const base = () => `http://127.0.0.1:${service.port}`;
  const get = async (path: string, token = TOKEN) => {
    const res = await fetch(`${base()}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: (await res.json()) as any, requestId: res.headers.get('x-request-id') };
  };
  const post = async (path: string, body?: unknown) => {
    const res = await fetch(`${base()}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  /** The service's log lines (JSON), to find what it logged about a request. */
  const logLines: string[] = [];
  const serviceLogger = createLogger({
    name: 'delivery-log',
    level: 'error',
    destination: new Writable({
      write(chunk, _encoding, done) {
        logLines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    }),
  });
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addSchema({ $id: 'openapi', components: openApiDocument.components });
  const conforms = (schema: string, value: unknown) => {
    const validate = ajv.getSchema(`openapi#/components/schemas/${schema}`)!;
    assert.ok(validate(value), `${schema}: ${ajv.errorsText(validate.errors)}`);
  };
  const event = (messageId: string, receivedAt: number) => {
    const iso = new Date(receivedAt).toISOString();
    const call = { sourceId: 'web', messageId, userId: 'u1', event: 'Bought', timestamp: iso, receivedAt: iso };
    return { key: 'web:u1', value: JSON.stringify(testEnvelope(call)) };
  };
  const attempt = (messageId: string, n: number, status: number, at: number): { key: string; value: string } => ({
    key: 'web:u1',
    value: JSON.stringify(
      testAttempt({ messageId, sourceId: 'web', attempt: n, status, latencyMs: 5 * n, at: new Date(at).toISOString() }),
    ),
  });

  before(async () => {
    await producer.connect();
    sql = await openDatabase({});
    service = await createDeliveryLog(
      { ...testServiceContext('delivery-log', config), logger: serviceLogger },
      { port: 0, now: () => clock, sql },
    ).start();
    const t = config.kafka.topics;
    const now = Date.now();
    await producer.send(t.events, [
      event('ok-1', now - 1_000),
      event('dead-1', now - 900),
      event('old-1', now - 47 * 3_600_000),
    ]);
    await producer.send(t.attempts, [
      attempt('ok-1', 1, 503, now - 800),
      attempt('ok-1', 2, 200, now - 700),
      attempt('dead-1', 1, 404, now - 600),
    ]);
    await producer.send(t.deadLetter, [
      {
        key: 'web:u1',
        value: '{}',
        headers: retryStateToHeaders({
          messageId: 'dead-1',
          sourceId: 'web',
          destinationId: 'hooks',
          eventType: 'track',
          endpoints: [],
          firstAttemptAt: now - 600,
          attempts: 1,
          history: [],
          deadReason: 'permanent_failure',
          deadAt: now - 500,
        }),
      },
    ]);
    await producer.send(t.rejected, [
      {
        key: null,
        value: '{"type":"track","messageId":"bad-1"}',
        headers: {
          'sluice-reject-code': 'invalid_call',
          'sluice-reject-message': 'track needs event',
          'sluice-reject-origin': 'ingest',
          'sluice-source-id': 'web',
        },
      },
      {
        // A call refused for its id: the log lists it under that id, so it must open under it.
        key: null,
        value: '{"type":"track","messageId":"has space"}',
        headers: {
          'sluice-reject-code': 'invalid_call',
          'sluice-reject-message': 'messageId has a space',
          'sluice-reject-origin': 'ingest',
          'sluice-source-id': 'web',
        },
      },
    ]);
    // One batch of two events to a destination of its own (the counts of `hooks` stay as they are).
    const batched = (messageId: string, status: number) => {
      const a = { ...JSON.parse(attempt(messageId, 1, status, now - 300).value), destinationId: 'batched' };
      return { key: 'web:u1', value: JSON.stringify({ ...a, batchId: 'batch-1', batchSize: 2 }) };
    };
    await producer.send(t.attempts, [batched('bat-1', 200), batched('bat-2', 503)]);
    // Unreadable records are skipped, never stop the partition.
    await producer.send(t.attempts, [{ key: null, value: 'not json' }, attempt('ok-2', 1, 200, now - 100)]);
    await waitUntil(async () => (await get('/api/v1/messages/web/ok-2')).status === 200, 30_000, 'records ingested');
  });
  after(async () => {
    await service?.close();
    await producer.disconnect();
    await sql?.close();
  });

  it('serves an OpenAPI 3.1 document whose schemas compile and whose routes all answer 401 without the token', async () => {
    const res = await fetch(`${base()}/openapi.json`);
    const doc = (await res.json()) as typeof openApiDocument;
    assert.equal(doc.openapi, '3.1.0');
    for (const name of Object.keys(doc.components.schemas))
      assert.ok(ajv.getSchema(`openapi#/components/schemas/${name}`), name);
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops as Record<string, { responses: Record<string, unknown> }>)) {
        assert.ok(op.responses['401'] && op.responses['400'], `${method} ${path} documents 400 and 401`);
        const url = path.replace(/\{[^}]+\}/g, 'x');
        const r = await fetch(`${base()}${url}`, {
          method: method.toUpperCase(),
          headers: { authorization: 'Bearer nope' },
        });
        // Past ten failures from one address the limit answers first (docs/reference/tokens.md).
        assert.ok([401, 429].includes(r.status), `${method} ${path}: ${r.status}`);
      }
    }
  });

  it('answers lookups, lists, health and the stream as the document says', async () => {
    const ok = await get('/api/v1/messages/web/ok-1');
    conforms('Message', ok.body);
    assert.deepEqual(
      ok.body.deliveries.map((d: { state: string }) => d.state),
      ['delivered'],
    );
    assert.deepEqual(
      ok.body.attempts.map((a: { status: number }) => a.status),
      [503, 200],
    );
    const dead = await get('/api/v1/messages/web/dead-1');
    conforms('Message', dead.body);
    assert.equal(dead.body.deliveries[0].state, 'dead');
    assert.equal(dead.body.deliveries[0].deadReason, 'permanent_failure');
    const bad = await get('/api/v1/messages/web/bad-1');
    conforms('Message', bad.body);
    assert.deepEqual(bad.body.deliveries[0].reject, {
      code: 'invalid_call',
      message: 'track needs event',
      origin: 'ingest',
    });
    const page = await get('/api/v1/messages?sourceId=web&limit=2');
    conforms('MessagePage', page.body);
    assert.equal(page.body.messages.length, 2);
    const rest = await get(`/api/v1/messages?sourceId=web&limit=2&cursor=${page.body.nextCursor}`);
    conforms('MessagePage', rest.body);
    const all = [...page.body.messages, ...rest.body.messages].map((m: { messageId: string }) => m.messageId);
    assert.equal(new Set(all).size, all.length, 'no message on two pages');
    const deadOnly = await get('/api/v1/messages?state=dead');
    assert.deepEqual(
      deadOnly.body.messages.map((m: { messageId: string }) => m.messageId),
      ['dead-1'],
    );
    const health = await get('/api/v1/destinations/hooks/health?window=1h');
    conforms('Health', health.body);
    assert.equal(health.body.endpoints[0].attempts, 4);
    const destinations = await get('/api/v1/destinations');
    conforms('Destinations', destinations.body);
    assert.equal(destinations.body.destinations[0].states.delivered, 2);
    const stream = await get('/api/v1/sources/web/events?limit=2');
    conforms('Events', stream.body);
    assert.deepEqual(
      stream.body.events.map((e: { messageId: string }) => e.messageId),
      ['dead-1', 'ok-1'],
    );
    for (const path of [
      '/api/v1/messages?limit=201',
      '/api/v1/destinations/hooks/health?window=9d',
      '/api/v1/sources/web/events?limit=1000',
      '/api/v1/messages/web/%ZZ',
    ]) {
      const r = await get(path);
      assert.equal(r.status, 400, path);
      conforms('Error', r.body);
    }
    const notDead = await fetch(`${base()}/api/v1/messages/web/bad-1/replay`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(notDead.status, 409);
    const tooBig = await fetch(`${base()}/api/v1/replays`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'bored' }),
    });
    assert.equal(tooBig.status, 400);
  });

  it("lists a batch's events with their state; each event's attempt names its batch", async () => {
    const batch = await get('/api/v1/batches/batch-1');
    assert.equal(batch.status, 200);
    conforms('Batch', batch.body);
    assert.deepEqual(
      batch.body.events.map((e: { messageId: string; status: number; state: string }) => [
        e.messageId,
        e.status,
        e.state,
      ]),
      [
        ['bat-1', 200, 'delivered'],
        ['bat-2', 503, 'retrying'],
      ],
    );
    assert.deepEqual([batch.body.batchSize, batch.body.totals], [2, { attempts: 2, events: 2 }]);
    const one = await get('/api/v1/messages/web/bat-2');
    conforms('Message', one.body);
    assert.deepEqual(
      one.body.attempts.map((a: { batchId: string; batchSize: number }) => [a.batchId, a.batchSize]),
      [['batch-1', 2]],
    );
    const alone = await get('/api/v1/messages/web/ok-1');
    assert.equal(alone.body.attempts[0].batchId, null, 'an attempt sent alone names no batch');
    const missing = await get('/api/v1/batches/no-such-batch');
    assert.equal(missing.status, 404);
    conforms('Error', missing.body);
  });

  it('answers the ledger and its unaccounted page as the document and @sluice/log-api say', async () => {
    const ledger = await get(`/api/v1/ledger?from=${Date.now() - DAY}&to=${Date.now() + DAY}&bucket=1h`);
    assert.equal(ledger.status, 200);
    conforms('Ledger', ledger.body);
    assert.equal(ledgerAnswer.mismatch(ledger.body), undefined, 'the answer has the type @sluice/log-api gives it');
    const hooks = ledger.body.totals.find((t: { destinationId: string }) => t.destinationId === 'hooks');
    assert.equal(hooks.accepted, hooks.delivered + hooks.filtered + hooks.dead + hooks.inFlight);
    const open = await get('/api/v1/ledger/unaccounted?destinationId=hooks&limit=5');
    assert.equal(open.status, 200);
    conforms('Unaccounted', open.body);
    assert.equal(unaccountedAnswer.mismatch(open.body), undefined);
  });

  it('answers every bad input with a 400 naming the field, on every route', async () => {
    const forged = Buffer.from(JSON.stringify([1e20, 'web', 'ok-1'])).toString('base64url');
    const cases: [string, string][] = [
      [`/api/v1/messages?sourceId=web&since=${encodeURIComponent("' OR 1=1")}`, 'since'],
      ['/api/v1/messages?until=10000-01-01T00:00:00Z', 'until'],
      ['/api/v1/messages?since=253402300800000', 'since'],
      ['/api/v1/messages?since=2026-02-30T00:00:00Z', 'since'],
      [`/api/v1/messages?cursor=${forged}`, 'cursor'],
      ['/api/v1/messages?limit=1&limit=2', 'limit'],
      ['/api/v1/messages/web/ok-1?expand=all', 'expand'],
      ['/api/v1/messages/web/%00', 'messageId'],
      ['/api/v1/destinations?verbose=1', 'verbose'],
      ['/api/v1/destinations/hooks/health?window=1h&x=1', 'x'],
      ['/api/v1/sources/web/events?since=1', 'since'],
      [`/api/v1/batches/${'b'.repeat(201)}`, 'batchId'],
      ['/api/v1/batches/%00', 'batchId'],
      ['/api/v1/batches/batch-1?limit=1', 'limit'],
      ['/api/v1/ledger?from=yesterday', 'from'],
      ['/api/v1/ledger?from=2000&to=1000', 'from'],
      ['/api/v1/ledger?from=0&to=86400001', 'bucket'],
      [`/api/v1/ledger?from=0&to=${1_440 * 86_400_000}&bucket=24h`, 'from'],
      ['/api/v1/ledger?bucket=30s', 'bucket'],
      ['/api/v1/ledger?destinationId=%00', 'destinationId'],
      ['/api/v1/ledger/unaccounted?limit=0', 'limit'],
      ['/api/v1/ledger/unaccounted?since=1', 'since'],
    ];
    for (const [path, field] of cases) {
      const r = await get(path);
      assert.equal(r.status, 400, path);
      assert.equal(r.body.field, field, path);
      conforms('Error', r.body);
    }
    const typo = await post('/api/v1/replays', { since: "' OR 1=1" });
    assert.deepEqual([typo.status, typo.body.field], [400, 'since'], 'a typo replays nothing');
    const farFuture = await post('/api/v1/replays', { until: 253_402_300_800_000 });
    assert.deepEqual([farFuture.status, farFuture.body.field], [400, 'until']);
    const unknown = await post('/api/v1/replays?dryRun=1', {});
    assert.deepEqual([unknown.status, unknown.body.field], [400, 'dryRun']);
    const onMessage = await post('/api/v1/messages/web/dead-1/replay?all=1');
    assert.deepEqual([onMessage.status, onMessage.body.field], [400, 'all']);
  });

  it('opens every message the list shows (ids are percent-encoded path segments)', async () => {
    const { body } = await get('/api/v1/messages?sourceId=web&limit=200');
    const ids = body.messages.map((m: { messageId: string }) => m.messageId);
    assert.ok(ids.includes('has space'), 'the refused call is listed');
    for (const id of ids) {
      const r = await get(`/api/v1/messages/web/${encodeURIComponent(id)}`);
      assert.equal(r.status, 200, id);
      conforms('Message', r.body);
    }
    const spaced = await get('/api/v1/messages/web/has%20space');
    assert.equal(spaced.body.deliveries[0].reject.message, 'messageId has a space');
  });

  it("a bulk replay re-injects from the log's index and is listed on the message it replayed", async () => {
    const first = await post('/api/v1/replays', { sourceId: 'web' });
    assert.equal(first.status, 202);
    conforms('ReplayResult', first.body);
    assert.deepEqual(first.body, { matched: 1, replayed: 1, skippedAlreadyReplayed: 0 });
    const [out] = await readTopic(kafka, config.kafka.topics.redeliver, { count: 1, timeoutMs: 10_000 });
    assert.equal(retryStateFromHeaders(out!.headers).messageId, 'dead-1');
    const dead = await get('/api/v1/messages/web/dead-1');
    conforms('Message', dead.body);
    assert.deepEqual(
      dead.body.replays.map((r: { bulk: boolean; replayed: number }) => [r.bulk, r.replayed]),
      [[true, 1]],
    );
    const again = await post('/api/v1/replays', { sourceId: 'web' });
    assert.deepEqual(again.body, { matched: 1, replayed: 0, skippedAlreadyReplayed: 1 });
    const one = await post('/api/v1/messages/web/dead-1/replay');
    assert.deepEqual([one.status, one.body.skippedAlreadyReplayed, one.body.replayed], [202, 1, 0]);
  });

  it('logs every 5xx with a request id, which the answer carries', async () => {
    await sql.query('alter table replays rename to replays_away');
    try {
      const r = await get('/api/v1/messages/web/ok-1');
      assert.equal(r.status, 500);
      conforms('Error', r.body);
      assert.ok(r.requestId);
      assert.equal(r.body.requestId, r.requestId);
      const logged = logLines.map((l) => JSON.parse(l)).find((l) => l.requestId === r.requestId);
      assert.ok(logged, 'the failure is logged under the request id');
      assert.equal(logged.route, 'getMessage');
      assert.match(JSON.stringify(logged.err), /replays/);
    } finally {
      await sql.query('alter table replays_away rename to replays');
    }
    const ok = await get('/api/v1/messages/web/ok-1');
    assert.equal(ok.status, 200);
    assert.ok(ok.requestId, 'every API answer carries its request id');
  });

  it('pruning with the clock moved past retention deletes exactly the old messages', async () => {
    assert.equal((await get('/api/v1/messages/web/old-1')).status, 200);
    clock = Date.now() + 2 * 3_600_000;
    const deleted = await service.pruner.runOnce();
    assert.equal(deleted, 1);
    assert.equal((await get('/api/v1/messages/web/old-1')).status, 404);
    assert.equal((await get('/api/v1/messages/web/ok-1')).status, 200);
    clock = Date.now() + 3 * DAY;
    assert.equal(await service.pruner.runOnce(), 7);
  });

  it('rebuilds from the topics: a fresh database reads them from the start into the same state', async () => {
    clock = Date.now();
    const fresh = await openDatabase({});
    const again = await createDeliveryLog(testServiceContext('delivery-log', config), {
      port: 0,
      now: () => clock,
      sql: fresh,
    }).start();
    try {
      const view = async (svc: DeliveryLogService, id: string) => {
        const r = await fetch(`http://127.0.0.1:${svc.port}/api/v1/messages/web/${id}`, {
          headers: { authorization: `Bearer ${TOKEN}` },
        });
        return r.status === 200 ? ((await r.json()) as Record<string, unknown>) : undefined;
      };
      await waitUntil(async () => (await view(again, 'ok-2')) !== undefined, 30_000, 'rebuild');
      for (const id of ['ok-1', 'dead-1', 'bad-1', 'ok-2', 'old-1']) {
        const rebuilt = await view(again, id);
        assert.ok(rebuilt, id);
        assert.deepEqual((rebuilt.deliveries as unknown[]).length > 0, true);
      }
      assert.deepEqual(
        ((await view(again, 'ok-1'))!.attempts as { status: number }[]).map((a) => a.status),
        [503, 200],
      );
      assert.equal(((await view(again, 'dead-1'))!.deliveries as { state: string }[])[0]!.state, 'dead');
    } finally {
      await again.close();
      await fresh.close();
    }
  });
});
