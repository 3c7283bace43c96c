import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import {
  type BlackHole,
  type ReceivedRequest,
  type Receiver,
  selfSignedCert,
  startBlackHole,
  startReceiver,
  testConfig,
  testServiceContext,
  waitUntil,
} from '@sluice/testkit';
import { verifySignature } from '@sluice/webhook-signature';
import { Webhook } from 'standardwebhooks';
import { openApiDocument } from '../src/adapters/http/openapi.ts';
import { createDeliveryLog, type DeliveryLogService } from '../src/service.ts';

const TOKEN = 'destination-test-token-of-32-characters-or-more';
const KEY_VARIABLE = 'SLUICE_DESTINATION_TEST_KEY';
const HEX_SECRET = 'x-signature-secret';
const BASE = '/api/v1/destination-definitions';
/** The delivery deadline of this log's config, shrunk so that the timeout case is quick. */
const DEADLINE_MS = 300;

const plainHeaders = (req: ReceivedRequest) =>
  Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));

/**
 * A destination test through the real delivery log (docs/reference/runtime-destinations.md, "Test
 * event"): a signed event to real receivers on 127.0.0.1 (HTTP, and HTTPS trusted through
 * `delivery.caFile`), one the SSRF policy refuses (no connection), one that never answers (the
 * deadline), every answer checked against the OpenAPI document.
 */
describe('delivery-log destination test', { timeout: 120_000 }, () => {
  let http: Receiver;
  let https: Receiver;
  let hole: BlackHole;
  /** Listens on 127.0.0.2, an address the SSRF policy of this log refuses: counts connections. */
  let refused: { server: Server; port: number; connections: number };
  let log: DeliveryLogService;
  const call = async (path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${log.port}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addSchema({ $id: 'openapi', components: openApiDocument.components });
  const conforms = (value: unknown) => {
    const validate = ajv.getSchema('openapi#/components/schemas/DestinationTestResult')!;
    assert.ok(validate(value), ajv.errorsText(validate.errors));
  };

  before(async () => {
    http = await startReceiver({ behaviour: () => ({ status: 202, body: `accepted\n${'z'.repeat(2_000)}` }) });
    https = await startReceiver({ tls: true });
    hole = await startBlackHole();
    const server = createServer((socket) => {
      refused.connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
    refused = { server, port: (server.address() as { port: number }).port, connections: 0 };
    const caFile = join(mkdtempSync(join(tmpdir(), 'destination-test-ca-')), 'ca.pem');
    writeFileSync(caFile, selfSignedCert().cert);
    process.env[KEY_VARIABLE] = randomBytes(32).toString('hex');
    const hook = (id: string, url: string, extra: Record<string, unknown> = {}) => ({
      id,
      type: 'webhooks',
      sourceIds: ['web'],
      ...extra,
      settings: { sharedSecret: HEX_SECRET, webhookUrl: url, ...(extra.settings as object) },
    });
    const config = testConfig({
      sources: [{ id: 'web', writeKeys: ['k'] }],
      destinations: [
        hook('orders', `${http.url}?token=s3cret`, {
          settings: { webhooks: [{ url: http.url, headers: { 'x-team': 'growth' } }] },
        }),
        hook('batched', http.url, { batch: {} }),
        hook('refused', `http://127.0.0.2:${refused.port}/hook`),
        hook('silent', hole.url),
      ],
      delivery: { timeout: `${DEADLINE_MS}ms`, caFile, ssrf: { allowCidrs: ['127.0.0.1/32'] } },
      deliveryLog: { adminToken: TOKEN },
      runtimeDestinations: { keyring: [{ id: 'k1', key: { env: KEY_VARIABLE } }] },
    });
    log = await createDeliveryLog(testServiceContext('delivery-log', config), { port: 0 }).start();
  });
  after(async () => {
    await log?.close();
    await Promise.all([http?.close(), https?.close(), hole?.close()]);
    await new Promise<void>((resolve) => (refused ? refused.server.close(() => resolve()) : resolve()));
  });

  it("sends a file destination's endpoint the signed sample event and answers its status, latency and first bytes", async () => {
    const before = http.requests.length;
    const answer = await call(`${BASE}/orders/test`, { endpoint: 1 });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    conforms(answer.body);
    const { body } = answer;
    assert.deepEqual([body.destinationId, body.endpoint, body.status, body.ok], ['orders', 1, 202, true]);
    assert.equal(body.url, http.url);
    assert.ok(body.latencyMs > 0);
    assert.equal(body.body, `accepted\\x0a${'z'.repeat(1_024 - 'accepted\n'.length)}`);
    assert.equal(body.truncated, true);
    assert.match(body.messageId, /^sluice-test-[0-9a-f-]{36}$/);
    assert.equal(http.requests.length, before + 1, 'one request, no retry');
    const got = http.requests.at(-1)!;
    assert.equal(got.headers['x-message-id'], body.messageId);
    assert.equal(got.headers['x-team'], 'growth', "the endpoint's own headers");
    assert.ok(verifySignature(HEX_SECRET, got.body, String(got.headers['x-signature'])), 'X-Signature verifies');
    const sent = JSON.parse(got.body.toString());
    assert.deepEqual(
      [sent.type, sent.event, sent.userId, sent.messageId, sent.properties],
      ['track', 'Sluice Test Event', 'sluice-test', body.messageId, { test: true }],
    );
    const first = await call(`${BASE}/orders/test`);
    assert.equal(first.body.endpoint, 0, 'the first endpoint by default');
    assert.equal(http.requests.at(-1)!.path, '/hook?token=s3cret');
    assert.ok(!first.body.url.includes('s3cret'), `the URL redacted: ${first.body.url}`);
    assert.notEqual(first.body.messageId, body.messageId, 'a fresh id each time');
  });

  it('sends the event given, and a batching destination a batch of one', async () => {
    const event = { type: 'identify', userId: 'u-7', traits: { plan: 'pro' } };
    const answer = await call(`${BASE}/batched/test`, { event });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    conforms(answer.body);
    const got = http.requests.at(-1)!;
    assert.equal(got.headers['x-batch-id'], answer.body.batchId);
    assert.equal(got.headers['x-batch-size'], '1');
    const document = JSON.parse(got.body.toString());
    assert.deepEqual(document.messageIds, [answer.body.messageId]);
    assert.deepEqual([document.events[0].type, document.events[0].traits], ['identify', { plan: 'pro' }]);
    assert.ok(verifySignature(HEX_SECRET, got.body, String(got.headers['x-signature'])));
  });

  it('tests a runtime destination over HTTPS (delivery.caFile), signed with Standard Webhooks', async () => {
    const definition = {
      id: 'crm',
      type: 'webhooks',
      sourceIds: ['web'],
      settings: { webhooks: [{ url: https.url }], signing: { schemes: ['standard-webhooks'] } },
    };
    const created = await call(BASE, definition);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const secret = created.body.secrets[0].secret as string;
    assert.match(secret, /^whsec_/);
    let answer = await call(`${BASE}/crm/test`);
    await waitUntil(
      async () => (answer = await call(`${BASE}/crm/test`)).status !== 404,
      30_000,
      'the runtime destination in force in the log',
    );
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    conforms(answer.body);
    assert.deepEqual([answer.body.status, answer.body.ok, answer.body.body], [200, true, 'ok']);
    const got = https.requests.at(-1)!;
    assert.equal(got.headers['webhook-id'], answer.body.messageId);
    assert.doesNotThrow(() => new Webhook(secret).verify(got.body.toString('utf8'), plainHeaders(got)));
    assert.equal(got.headers['x-signature'], undefined, 'only the scheme the destination chose');
  });

  it('answers ok: false with the SSRF refusal, and makes no connection', async () => {
    const answer = await call(`${BASE}/refused/test`);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    conforms(answer.body);
    assert.deepEqual([answer.body.ok, answer.body.status, answer.body.body], [false, null, '']);
    assert.match(answer.body.error, /^refused by the SSRF policy: 127\.0\.0\.2 is a loopback address/);
    assert.equal(refused.connections, 0);
  });

  it('gives up at the delivery deadline when the endpoint never answers', async () => {
    const started = Date.now();
    const answer = await call(`${BASE}/silent/test`);
    const took = Date.now() - started;
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    conforms(answer.body);
    assert.deepEqual([answer.body.ok, answer.body.status], [false, null]);
    assert.equal(answer.body.error, `timed out after ${DEADLINE_MS} ms (delivery.timeout)`);
    assert.ok(answer.body.latencyMs >= DEADLINE_MS - 10 && took < DEADLINE_MS + 5_000, `took ${took} ms`);
    assert.equal(hole.connections, 1);
  });

  it('404 for an unknown destination, 400 naming the field for an endpoint past the last or an event it cannot send', async () => {
    const unknown = await call(`${BASE}/nope/test`);
    assert.equal(unknown.status, 404);
    const past = await call(`${BASE}/orders/test`, { endpoint: 2 });
    assert.deepEqual([past.status, past.body.field], [400, 'endpoint']);
    assert.match(past.body.message, /from 0 to 1/);
    const event = await call(`${BASE}/orders/test`, { event: { type: 'purchase' } });
    assert.deepEqual([event.status, event.body.field], [400, 'event']);
    const extra = await call(`${BASE}/orders/test`, { retries: 1 });
    assert.deepEqual([extra.status, extra.body.field], [400, 'retries']);
  });

  it('records nothing: the test events are not in the log', async () => {
    const res = await fetch(`http://127.0.0.1:${log.port}/api/v1/messages?sourceId=web`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const page = (await res.json()) as { messages: unknown[] };
    assert.deepEqual(page.messages, []);
  });
});
