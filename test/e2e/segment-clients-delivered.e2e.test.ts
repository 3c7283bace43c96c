// The real Segment client libraries against the whole delivery path: each client's six calls go
// through ingest and Kafka to the deliverer and arrive at a webhook receiver, signed, with the
// body shape of docs/reference/delivery.md. segment-analytics-python (PyPI) sends gzip and
// `"category": null` / `"name": null` on page and screen; @segment/analytics-node is the npm one.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, it } from 'node:test';
import { Analytics } from '@segment/analytics-node';
import { createDeliverer } from '@sluice/deliverer';
import { createIngest } from '@sluice/ingest';
import { startReceiver, testConfig, testServiceContext, uniqueName, type Receiver } from '@sluice/testkit';
import { verifySignature } from '@sluice/webhook-signature';

const run = promisify(execFile);
const WRITE_KEY = 'segment-clients-key';
const SECRET = 'segment-clients-secret';
/** Pinned: the version whose payloads this test was written against. */
const PYTHON_CLIENT = 'segment-analytics-python==2.4.0';
const VENV = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'sluice', 'segment-analytics-python-2.4.0');

let receiver: Receiver;
let ingest: Awaited<ReturnType<ReturnType<typeof createIngest>['start']>>;
let deliverer: Awaited<ReturnType<ReturnType<typeof createDeliverer>['start']>>;

before(async () => {
  receiver = await startReceiver();
  const config = testConfig({
    ingest: { linger: '2ms' },
    sources: [{ id: 'segment', name: 'Segment clients', writeKeys: [WRITE_KEY] }],
    destinations: [
      {
        id: 'hook',
        type: 'webhooks',
        sourceIds: ['segment'],
        settings: { webhooks: [{ url: `${receiver.url}/in` }], sharedSecret: SECRET },
      },
    ],
    delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
  });
  ingest = await createIngest(testServiceContext('ingest', config), { port: 0, host: '127.0.0.1' }).start();
  deliverer = await createDeliverer(testServiceContext('deliverer', config), { port: 0 }).start();
});
after(async () => {
  await deliverer.close();
  await ingest.close();
  await receiver.close();
});

type Body = Record<string, unknown> & { context: Record<string, unknown> };
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The webhook bodies of one run (its user id), checked signed and shaped; by type. */
async function deliveredRun(user: string): Promise<Map<string, Body>> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const mine = receiver.requests.filter((r) => r.body.toString().includes(user));
    if (mine.length >= 6 || Date.now() > deadline) {
      assert.equal(mine.length, 6, `six webhooks for ${user}`);
      const byType = new Map<string, Body>();
      for (const request of mine) {
        assert.ok(verifySignature(SECRET, request.body, String(request.headers['x-signature'])), 'signed');
        const body = JSON.parse(request.body.toString()) as Body;
        assert.equal(request.headers['x-message-id'], body.messageId);
        assert.equal(body.version, 1);
        assert.match(String(body.timestamp), ISO_MS);
        byType.set(String(body.type), body);
      }
      assert.deepEqual([...byType.keys()].sort(), ['alias', 'group', 'identify', 'page', 'screen', 'track']);
      return byType;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The shape of each type's webhook body: the keys the deliverer writes, and nothing `null` but userId. */
function checkShapes(byType: Map<string, Body>, user: string, library: RegExp): void {
  const keys = (type: string) => Object.keys(byType.get(type)!).sort();
  const common = ['context', 'messageId', 'timestamp', 'type', 'userId', 'version'];
  assert.deepEqual(keys('identify'), [...common, 'traits'].sort());
  assert.deepEqual(keys('track'), [...common, 'event', 'properties'].sort());
  assert.deepEqual(keys('page'), [...common, 'name', 'properties'].sort());
  assert.deepEqual(keys('screen'), [...common, 'name'].sort());
  assert.deepEqual(keys('group'), [...common, 'groupId', 'traits'].sort());
  assert.deepEqual(keys('alias'), [...common, 'Previous ID', 'User ID'].sort());
  for (const body of byType.values()) {
    assert.equal(body.userId, user);
    assert.match(String((body.context.library as { name: string }).name), library);
    assert.equal(body.context.ip, '127.0.0.1');
  }
  assert.deepEqual(byType.get('identify')!.traits, { plan: 'pro' });
  assert.equal(byType.get('track')!.event, 'Order Completed');
  assert.deepEqual(byType.get('track')!.properties, { total: 42.5 });
  assert.equal(byType.get('page')!.name, 'Pricing');
  assert.deepEqual(byType.get('page')!.properties, { path: '/pricing' });
  assert.equal(byType.get('screen')!.name, 'Checkout');
  assert.equal(byType.get('group')!.groupId, 'g-1');
  assert.deepEqual(byType.get('group')!.traits, { seats: 5 });
  assert.equal(byType.get('alias')!['Previous ID'], `anon-${user}`);
  assert.equal(byType.get('alias')!['User ID'], user);
}

/** A virtualenv with the pinned client under the cache dir; undefined when pip cannot reach the registry. */
async function pythonClient(): Promise<string | undefined> {
  const python = join(VENV, 'bin', 'python');
  if (existsSync(join(VENV, '.sluice-ready'))) return python;
  await run('python3', ['-m', 'venv', VENV], { timeout: 120_000 });
  try {
    await run(join(VENV, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', PYTHON_CLIENT], {
      timeout: 300_000,
    });
  } catch (err) {
    process.stderr.write(`pip could not install ${PYTHON_CLIENT}: ${(err as Error).message.split('\n')[0]}\n`);
    return undefined;
  }
  await run('touch', [join(VENV, '.sluice-ready')]);
  return python;
}

const PYTHON_SCRIPT = `
import sys
from segment.analytics import Client
host, key, user = sys.argv[1], sys.argv[2], sys.argv[3]
errors = []
client = Client(key, host=host, gzip=True, on_error=lambda e, batch: errors.append(repr(e)), max_retries=1)
client.identify(user, {"plan": "pro"})
client.track(user, "Order Completed", {"total": 42.5})
client.page(user, name="Pricing", properties={"path": "/pricing"})
client.screen(user, name="Checkout")
client.group(user, "g-1", {"seats": 5})
client.alias("anon-" + user, user)
client.shutdown()
if errors:
    sys.exit("client errors: " + "; ".join(errors))
`;

it('segment-analytics-python (gzip, nulls in optional fields): all six calls delivered, signed, with the right shapes', {
  timeout: 420_000,
}, async (t) => {
  const python = await pythonClient();
  if (!python) return t.skip(`pip could not reach the registry to install ${PYTHON_CLIENT}`);
  const user = uniqueName('py-user');
  await run(python, ['-c', PYTHON_SCRIPT, `http://127.0.0.1:${ingest.port}`, WRITE_KEY, user], { timeout: 60_000 });
  checkShapes(await deliveredRun(user), user, /analytics-python/);
});

it('@segment/analytics-node: all six calls delivered, signed, with the right shapes', { timeout: 60_000 }, async () => {
  const user = uniqueName('node-user');
  const analytics = new Analytics({
    writeKey: WRITE_KEY,
    host: `http://127.0.0.1:${ingest.port}`,
    maxEventsInBatch: 10,
    flushInterval: 50,
  });
  const errors: unknown[] = [];
  analytics.on('error', (err) => errors.push(err));
  analytics.identify({ userId: user, traits: { plan: 'pro' } });
  analytics.track({ userId: user, event: 'Order Completed', properties: { total: 42.5 } });
  analytics.page({ userId: user, name: 'Pricing', properties: { path: '/pricing' } });
  analytics.screen({ userId: user, name: 'Checkout' });
  analytics.group({ userId: user, groupId: 'g-1', traits: { seats: 5 } });
  analytics.alias({ userId: user, previousId: `anon-${user}` });
  await analytics.closeAndFlush({ timeout: 10_000 });
  assert.deepEqual(errors, []);
  const byType = await deliveredRun(user);
  // analytics-node puts page fields under properties too (name, path, url...).
  const page = byType.get('page')!;
  page.properties = { path: (page.properties as { path: string }).path };
  checkShapes(byType, user, /analytics-node/);
});
