// `sluice destinations create|get|export|apply` against a real in-process delivery log on the test broker.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runCli } from '@sluice/cli';
import { createDeliveryLog, type DeliveryLogService } from '@sluice/delivery-log';
import { testConfig, testServiceContext } from '@sluice/testkit';
import { memoryIo } from './cli-io.ts';

const TOKEN = 'cli-definitions-token-of-32-characters-or-more';
const KEY_VARIABLE = 'SLUICE_CLI_DEFINITIONS_TEST_KEY';
let log: DeliveryLogService;
let env: NodeJS.ProcessEnv;
const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-definitions-'));
const cli = async (...args: string[]) => {
  const io = memoryIo('', env);
  const code = await runCli(args, io.io);
  return { code, stdout: io.stdout(), stderr: io.stderr() };
};
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

before(async () => {
  process.env[KEY_VARIABLE] = randomBytes(32).toString('hex');
  const config = testConfig({
    sources: [{ id: 'web', writeKeys: ['k'] }],
    destinations: [{ id: 'orders', type: 'webhooks', settings: { webhookUrl: 'https://o.example/' } }],
    deliveryLog: { adminToken: TOKEN },
    runtimeDestinations: { keyring: [{ id: 'k1', key: { env: KEY_VARIABLE } }] },
  });
  log = await createDeliveryLog(testServiceContext('delivery-log', config), { port: 0 }).start();
  env = { SLUICE_API_URL: `http://127.0.0.1:${log.port}/`, SLUICE_API_TOKEN: TOKEN, CRM_URL: 'https://crm.example/h' };
});
after(async () => {
  await log?.close();
});

test('create, export, apply of the export (no-op), a dry run that changes nothing, then apply', {
  timeout: 60_000,
}, async () => {
  const crm = file(
    'crm.yaml',
    'id: crm\ntype: webhooks\nsourceIds: [web]\nsettings:\n  webhooks:\n    - url: { env: CRM_URL }\n',
  );
  const created = await cli('destinations', 'create', '-f', crm);
  assert.equal(created.code, 0, created.stderr);
  assert.match(
    created.stdout,
    /crm: version 1\n {2}settings\.signing\.xSignature\.secrets\[0\]\.secret = [0-9a-f]{64}/,
  );
  const got = await cli('destinations', 'get', 'crm');
  assert.match(got.stdout, /# version "1"/);
  assert.ok(!got.stdout.includes('crm.example'), 'secrets masked');

  const exported = await cli('destinations', 'export');
  assert.equal(exported.code, 0, exported.stderr);
  assert.match(exported.stdout, /url:\n\s+env: SLUICE_CRM_SETTINGS_WEBHOOKS_0_URL/);
  assert.ok(!exported.stdout.includes('orders'), "the file's destinations are not exported");
  const runtimeFile = file('runtime.yaml', exported.stdout);
  const again = await cli('destinations', 'apply', '-f', runtimeFile);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stdout, 'no changes\n');

  const wanted = file(
    'wanted.yaml',
    `${exported.stdout.replace('sourceIds:\n      - web', 'sourceIds:\n      - web\n    enabled: false')}` +
      '  - id: erp\n    type: webhooks\n    settings:\n      webhookUrl: { env: CRM_URL }\n',
  );
  const dry = await cli('destinations', 'apply', '-f', wanted, '--dry-run');
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(dry.stdout, '~ crm (enabled)\n+ erp\n');
  assert.equal((await cli('destinations', 'apply', '-f', wanted, '--dry-run')).stdout, dry.stdout, 'nothing changed');

  env = { ...env, SLUICE_CRM_SETTINGS_WEBHOOKS_0_URL: 'https://crm.example/h' };
  const applied = await cli('destinations', 'apply', '-f', wanted);
  assert.equal(applied.code, 0, applied.stderr);
  assert.equal(applied.stdout, '~ crm (enabled)\n+ erp\napplied 2 change(s)\n');
  assert.equal((await cli('destinations', 'apply', '-f', wanted)).stdout, 'no changes\n');

  const emptied = await cli('destinations', 'apply', '-f', file('none.yaml', 'destinations: []\n'));
  assert.equal(emptied.stdout, '- crm\n- erp\napplied 2 change(s)\n');
  const gone = await cli('destinations', 'get', 'crm');
  assert.equal(gone.code, 1);
});
