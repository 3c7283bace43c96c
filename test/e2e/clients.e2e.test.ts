// End to end: both client libraries against the real ingest; their events are on
// sluice.events with the right fields.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, it } from 'node:test';
import { Analytics } from '@sluice/analytics';
import { createIngest } from '@sluice/ingest';
import { jsonValues, readTopic, testConfig, testServiceContext, uniqueName, testKafka } from '@sluice/testkit';

const WRITE_KEY = 'clients-e2e-key';
const config = testConfig({ sources: [{ id: 'clients', writeKeys: [WRITE_KEY] }] });
const ctx = testServiceContext('ingest', config);
let ingest: Awaited<ReturnType<ReturnType<typeof createIngest>['start']>>;

before(async () => {
  ingest = await createIngest(ctx, { port: 0 }).start();
});
after(() => ingest.close());

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
type Env = Record<string, unknown> & { context: { library: { name: string; version: string } } };

function checkCommon(events: Env[], run: string, library: RegExp): Map<string, Env> {
  const byId = new Map(events.filter((e) => String(e.messageId).startsWith(run)).map((e) => [String(e.messageId), e]));
  assert.equal(byId.size, 6, `six events of run ${run}`);
  for (const e of byId.values()) {
    assert.equal(e.sourceId, 'clients');
    for (const field of ['timestamp', 'receivedAt', 'sentAt'])
      assert.match(String(e[field]), ISO_MS, `${field} of ${e.type}`);
    assert.match(e.context.library.name, library);
    assert.ok(e.context.library.version);
  }
  const get = (type: string) => byId.get(`${run}-${type}`)!;
  assert.equal(get('track').event, 'Order Completed');
  assert.equal((get('track').properties as { total: number }).total, 42.5);
  assert.equal((get('identify').traits as { plan: string }).plan, 'pro');
  assert.equal(get('page').name, 'Pricing');
  assert.equal((get('page').properties as { url: string }).url, 'https://example.org/pricing');
  assert.equal(get('screen').name, 'Checkout');
  assert.equal(get('screen').userId, null);
  assert.ok(String(get('screen').anonymousId).length > 0);
  assert.equal(get('group').groupId, 'g-1');
  assert.ok(String(get('alias').previousId).length > 0);
  return byId;
}

it('the TypeScript client: every call type lands on sluice.events with the right fields', async () => {
  const run = uniqueName('ts');
  const client = new Analytics(WRITE_KEY, { endpoint: `http://127.0.0.1:${ingest.port}`, flushAt: 20 });
  const user = `ts-user-${run}`;
  client.identify({ userId: user, messageId: `${run}-identify`, traits: { plan: 'pro' } });
  client.track({ userId: user, messageId: `${run}-track`, event: 'Order Completed', properties: { total: 42.5 } });
  client.page({
    userId: user,
    messageId: `${run}-page`,
    name: 'Pricing',
    properties: { url: 'https://example.org/pricing' },
  });
  client.screen({ anonymousId: `ts-anon-${run}`, messageId: `${run}-screen`, name: 'Checkout' });
  client.group({ userId: user, messageId: `${run}-group`, groupId: 'g-1', traits: { name: 'Initech' } });
  client.alias({ userId: user, messageId: `${run}-alias`, previousId: `ts-anon-${run}` });
  await client.close();
  const kafka = testKafka({ brokers: ctx.brokers, clientId: 'clients-e2e', logger: ctx.logger });
  const records = await readTopic(kafka, config.kafka.topics.events, { count: 6, timeoutMs: 20_000 });
  const byId = checkCommon(jsonValues<Env>(records), run, /analytics/);
  const track = records.find((r) => r.value?.toString().includes(`${run}-track`))!;
  assert.equal(track.key, `clients:${user}`);
  assert.equal(byId.get(`${run}-alias`)!.userId, user);
});

it('the Go client: every call type lands on sluice.events with the right fields', { timeout: 180_000 }, async () => {
  const run = uniqueName('go');
  const goDir = fileURLToPath(new URL('../../clients/go/', import.meta.url));
  await promisify(execFile)('go', ['run', './internal/e2esend', `http://127.0.0.1:${ingest.port}`, WRITE_KEY, run], {
    cwd: goDir,
    timeout: 170_000,
  });
  const kafka = testKafka({ brokers: ctx.brokers, clientId: 'clients-e2e', logger: ctx.logger });
  const records = await readTopic(kafka, config.kafka.topics.events, { count: 12, timeoutMs: 20_000 });
  const byId = checkCommon(jsonValues<Env>(records), run, /go/);
  assert.equal(byId.get(`${run}-alias`)!.userId, `go-user-${run}`);
});
