// `sluice destinations` against a real in-process delivery log on the test broker.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runCli } from '@sluice/cli';
import { createDeliveryLog, type DeliveryLogService } from '@sluice/delivery-log';
import { testConfig, testServiceContext } from '@sluice/testkit';
import { memoryIo } from './cli-io.ts';

const TOKEN = 'cli-destinations-token-of-32-characters-or-more';
const config = testConfig({
  destinations: [
    {
      id: 'shop',
      type: 'webhooks',
      settings: { webhooks: [{ url: 'https://a.example/h' }, { url: 'https://b.example/h' }] },
    },
  ],
  deliveryLog: { adminToken: TOKEN },
});
let log: DeliveryLogService;
const cli = async (env: NodeJS.ProcessEnv, ...args: string[]) => {
  const io = memoryIo('', env);
  const code = await runCli(args, io.io);
  return { code, stdout: io.stdout(), stderr: io.stderr() };
};
let env: NodeJS.ProcessEnv;

before(async () => {
  log = await createDeliveryLog(testServiceContext('delivery-log', config), { port: 0 }).start();
  env = { SLUICE_API_URL: `http://127.0.0.1:${log.port}/`, SLUICE_API_TOKEN: TOKEN };
});
after(async () => {
  await log?.close();
});

test('list, pause an endpoint, pause and resume the destination: each shown as the API keeps it', {
  timeout: 60_000,
}, async () => {
  const listed = await cli(env, 'destinations', 'list');
  assert.equal(listed.code, 0, listed.stderr);
  assert.equal(listed.stdout, 'shop  active\n  https://a.example/h  active\n  https://b.example/h  active\n');

  const paused = await cli(
    env,
    'destinations',
    'pause',
    'shop',
    '--endpoint',
    'https://b.example/h',
    '--reason',
    'their maintenance',
  );
  assert.equal(paused.code, 0, paused.stderr);
  // Recorded by the name and id of the token the CLI was given (the admin's), never by a caller's word.
  assert.match(
    paused.stdout,
    /^shop https:\/\/b\.example\/h: paused since \S+ by admin \(token admin\): their maintenance\n$/,
  );

  const disabled = await cli(env, 'destinations', 'disable', 'shop', '--reason', 'contract ended', '--json');
  assert.equal(disabled.code, 0, disabled.stderr);
  const answer = JSON.parse(disabled.stdout);
  assert.equal(answer.state, 'disabled');
  assert.equal(answer.by, 'admin');
  assert.equal(answer.action.action, 'disable');
  assert.equal(answer.action.byTokenId, 'admin');

  const after = await cli(env, 'destinations', 'list', '--json');
  const [shop] = JSON.parse(after.stdout);
  assert.equal(shop.state.state, 'disabled');
  assert.deepEqual(
    shop.endpointStates.map((e: { state: string }) => e.state),
    ['active', 'paused'],
  );
  const enabled = await cli(env, 'destinations', 'enable', 'shop', '--reason', 'renewed');
  assert.equal(enabled.code, 0, enabled.stderr);
  assert.match(enabled.stdout, /^shop: active since \S+ by admin \(token admin\): renewed\n$/);
});

test('refusals: unknown destination (1, the API says why), no reason (usage), no URL or token (2)', {
  timeout: 30_000,
}, async () => {
  const unknown = await cli(env, 'destinations', 'pause', 'nope', '--reason', 'x');
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /404 no destination of the config has this id/);
  const noReason = await cli(env, 'destinations', 'pause', 'shop');
  assert.notEqual(noReason.code, 0);
  assert.match(noReason.stderr, /--reason/);
  const noUrl = await cli({ SLUICE_API_TOKEN: TOKEN }, 'destinations', 'list');
  assert.equal(noUrl.code, 2);
  assert.match(noUrl.stderr, /SLUICE_API_URL is not set/);
  const noToken = await cli({ SLUICE_API_URL: env.SLUICE_API_URL }, 'destinations', 'list');
  assert.equal(noToken.code, 2);
  const badToken = await cli({ ...env, SLUICE_API_TOKEN: 'wrong' }, 'destinations', 'list');
  assert.equal(badToken.code, 1);
  assert.match(badToken.stderr, /401/);
});

test('list prints a reason as text: terminal escapes in it are shown escaped, never sent to the terminal', {
  timeout: 30_000,
}, async () => {
  const reason = 'vendor down \u001b]0;owned\u0007\u001b[2J';
  // A `by` in the body is not taken: the action is recorded by the token's name.
  const by = 'eve\u009b31m';
  const res = await fetch(
    `${env.SLUICE_API_URL}api/v1/destinations/shop/endpoints/${encodeURIComponent('https://a.example/h')}/pause`,
    {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason, by }),
    },
  );
  assert.equal(res.status, 200, await res.text());
  const listed = await cli(env, 'destinations', 'list');
  assert.equal(listed.code, 0, listed.stderr);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: no control character may reach the terminal.
  assert.doesNotMatch(listed.stdout, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  assert.match(
    listed.stdout,
    /^ {2}https:\/\/a\.example\/h {2}paused since \S+ by admin: vendor down \\x1b\]0;owned\\x07\\x1b\[2J$/m,
  );
  // The JSON form keeps the values as the API holds them.
  const json = await cli(env, 'destinations', 'list', '--json');
  // JSON escapes C0 itself; DEL and C1 must be escaped too.
  assert.doesNotMatch(json.stdout, /[\u007f-\u009f]/);
  const [shop] = JSON.parse(json.stdout);
  assert.equal(shop.endpointStates[0].reason, reason);
  assert.equal(shop.endpointStates[0].by, 'admin', `not the body's ${JSON.stringify(by)}`);
  const resumed = await cli(
    env,
    'destinations',
    'resume',
    'shop',
    '--endpoint',
    'https://a.example/h',
    '--reason',
    'back',
  );
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.match(resumed.stdout, /^shop https:\/\/a\.example\/h: active since \S+ by admin \(token admin\): back\n$/);
});
