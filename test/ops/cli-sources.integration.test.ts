// `sluice sources create|get|list|rename|delete|mint-key|revoke-key` against a real in-process
// delivery log on the test broker.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type CliLog, startCliLog } from './cli-log.ts';

let started: CliLog | undefined;
const cli = (...args: string[]) => started!.cli(...args);

before(async () => {
  started = await startCliLog(
    { sources: [{ id: 'web', name: 'Web', writeKeys: ['file-write-key'] }] },
    'SLUICE_CLI_SOURCES_TEST_KEY',
  );
});
after(async () => {
  await started?.log.close();
});

test('create prints the key once; list, get, rename, mint-key, revoke-key, delete; the file’s source is read-only', {
  timeout: 60_000,
}, async () => {
  const created = await cli('sources', 'create', 'shop', '--name', 'Shop');
  assert.equal(created.code, 0, created.stderr);
  const [, keyId, key] =
    /^shop: version 1\n {2}write key (wk_[0-9a-f]{12}) = (sk_[A-Za-z0-9_-]{43}) {2}\(shown once/.exec(created.stdout)!;
  assert.ok(keyId && key, created.stdout);

  const listed = await cli('sources', 'list');
  assert.equal(listed.code, 0, listed.stderr);
  assert.equal(listed.stdout, `shop  runtime v1  Shop  keys: ${keyId}\nweb  file (the config given at start)  Web\n`);
  const got = await cli('sources', 'get', 'shop');
  assert.match(got.stdout, /^# version "1"\n/);
  assert.match(got.stdout, new RegExp(`id: ${keyId}`));
  for (const shown of [listed.stdout, got.stdout, (await cli('sources', 'list', '--json')).stdout])
    assert.ok(!shown.includes(key!) && !shown.includes('file-write-key'), 'no key shown again');

  const renamed = await cli('sources', 'rename', 'shop', 'Shop EU');
  assert.equal(renamed.stdout, 'shop: version 2\n');
  const minted = await cli('sources', 'mint-key', 'shop', '--json');
  assert.equal(minted.code, 0, minted.stderr);
  const answer = JSON.parse(minted.stdout) as { source: { version: number }; writeKey: { id: string; key: string } };
  assert.equal(answer.source.version, 3);
  assert.match(answer.writeKey.key, /^sk_/);
  const stale = await cli('sources', 'revoke-key', 'shop', keyId!, '--if-match', '"2"');
  assert.equal(stale.code, 1);
  assert.match(stale.stderr, /412 source shop is at version 3, not 2/);
  const revoked = await cli('sources', 'revoke-key', 'shop', keyId!);
  assert.equal(revoked.stdout, `shop: write key ${keyId} revoked (version 4)\n`);
  assert.match(
    (await cli('sources', 'list')).stdout,
    new RegExp(`shop  runtime v4  Shop EU  keys: ${answer.writeKey.id}\n`),
  );

  const fileSource = await cli('sources', 'rename', 'web', 'x');
  assert.equal(fileSource.code, 1);
  assert.match(fileSource.stderr, /web is declared in the config file/);
  assert.match((await cli('sources', 'get', 'web')).stdout, /^# declared in the config file\n/);

  const deleted = await cli('sources', 'delete', 'shop');
  assert.equal(deleted.stdout, 'shop: deleted\n');
  assert.equal((await cli('sources', 'get', 'shop')).code, 1);
});
