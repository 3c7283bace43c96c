// `sluice portal-links create` against a real in-process delivery log on the test broker.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type CliLog, startCliLog } from './cli-log.ts';

let started: CliLog | undefined;
const cli = (...args: string[]) => started!.cli(...args);

before(async () => {
  started = await startCliLog(
    {
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
    },
    'SLUICE_CLI_PORTAL_LINKS_TEST_KEY',
  );
});
after(async () => {
  await started?.log.close();
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
  const listed = await fetch(`http://127.0.0.1:${started!.log.port}/api/v1/destinations`, {
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
