// `sluice portal-links create` against a real in-process delivery log on the test broker.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { runCli } from '@sluice/cli';
import { createDeliveryLog, type DeliveryLogService } from '@sluice/delivery-log';
import { testConfig, testServiceContext } from '@sluice/testkit';
import { memoryIo } from './cli-io.ts';

const TOKEN = 'cli-portal-links-token-of-32-characters-or-more';
const KEY_VARIABLE = 'SLUICE_CLI_PORTAL_LINKS_TEST_KEY';
let log: DeliveryLogService;
let env: NodeJS.ProcessEnv;
const cli = async (...args: string[]) => {
  const io = memoryIo('', env);
  const code = await runCli(args, io.io);
  return { code, stdout: io.stdout(), stderr: io.stderr() };
};

before(async () => {
  process.env[KEY_VARIABLE] = randomBytes(32).toString('hex');
  const config = testConfig({
    sources: [{ id: 'web', tenant: 'acme', writeKeys: ['file-write-key'] }],
    destinations: [
      {
        id: 'crm',
        tenant: 'acme',
        type: 'webhooks',
        sourceIds: ['web'],
        settings: { webhooks: [{ url: 'http://127.0.0.1:9/hook' }] },
      },
    ],
    deliveryLog: { adminToken: TOKEN },
    runtimeDestinations: { keyring: [{ id: 'k1', key: { env: KEY_VARIABLE } }] },
  });
  log = await createDeliveryLog(testServiceContext('delivery-log', config), { port: 0 }).start();
  env = { SLUICE_API_URL: `http://127.0.0.1:${log.port}/`, SLUICE_API_TOKEN: TOKEN };
});
after(async () => {
  await log?.close();
});

test("create prints the console's URL with the link, or the answer as JSON; the link opens the tenant's view", {
  timeout: 60_000,
}, async () => {
  const created = await cli('portal-links', 'create', '--tenant', 'acme', '--destination', 'crm', '--ttl-ms', '60000');
  assert.equal(created.code, 0, created.stderr);
  const [, url, token] =
    /^(http:\/\/127\.0\.0\.1:\d+\/console\/#portal=(spl1\.k1\.[^\s]+))\n {2}link \S+, expires \S+\n$/.exec(
      created.stdout,
    )!;
  assert.ok(url && token, created.stdout);
  const listed = await fetch(`http://127.0.0.1:${log.port}/api/v1/destinations`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(listed.status, 200);
  assert.deepEqual(
    ((await listed.json()) as { destinations: { id: string }[] }).destinations.map((d) => d.id),
    ['crm'],
  );

  const json = await cli('portal-links', 'create', '--tenant', 'acme', '--json');
  assert.equal(json.code, 0, json.stderr);
  const answer = JSON.parse(json.stdout) as { id: string; url: string; token: string; expiresAt: string };
  assert.equal(answer.url.endsWith(`#portal=${answer.token}`), true);

  const other = await cli('portal-links', 'create', '--tenant', 'acme', '--destination', 'nope');
  assert.equal(other.code, 1);
  assert.match(other.stderr, /404/);
});
