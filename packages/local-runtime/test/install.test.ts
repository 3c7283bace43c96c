import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { installOnce, isInstalled, withFileLock } from '../src/index.ts';

const root = mkdtempSync(join(tmpdir(), 'sluice-install-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

test('two installs at once build once; the installation has its marker and nothing is left beside it', async () => {
  const home = join(root, 'tool-1.0');
  let builds = 0;
  const spec = {
    home,
    what: 'tool 1.0',
    build: async ({ staging }: { staging: string }) => {
      builds++;
      await sleep(100);
      writeFileSync(join(staging, 'bin'), 'x');
      return { version: '1.0' };
    },
  };
  const [a, b] = await Promise.all([installOnce(spec), installOnce(spec)]);
  assert.equal(builds, 1);
  assert.deepEqual([a.installedNow, b.installedNow].sort(), [false, true]);
  assert.ok(isInstalled(home));
  assert.equal(JSON.parse(readFileSync(join(home, '.installed'), 'utf8')).version, '1.0');
  assert.equal(readFileSync(join(home, 'bin'), 'utf8'), 'x');
  assert.deepEqual(readdirSync(root).sort(), ['tool-1.0']);
  assert.deepEqual(await installOnce(spec), { home, installedNow: false });
});

test('a failed build leaves no installation, and leftovers of a killed install are removed', async () => {
  const home = join(root, 'tool-2.0');
  mkdirSync(join(root, '.tool-2.0.tmp-killed'));
  mkdirSync(home); // an interrupted older attempt: no marker
  await assert.rejects(
    installOnce({
      home,
      what: 'tool 2.0',
      build: async () => {
        throw new Error('download failed');
      },
    }),
    /download failed/,
  );
  assert.equal(isInstalled(home), false);
  assert.deepEqual(
    readdirSync(root).filter((e) => e.includes('2.0')),
    ['tool-2.0'],
  );
  await installOnce({ home, what: 'tool 2.0', build: async () => ({}) });
  assert.ok(isInstalled(home));
  assert.deepEqual(
    readdirSync(root).filter((e) => e.includes('2.0')),
    ['tool-2.0'],
  );
});

test('a lock whose holder is gone is broken; a live one is waited for', async () => {
  const lock = join(root, 'x.lock');
  writeFileSync(lock, `999999999 ${hostname()} ${Date.now()} dead`);
  assert.equal(await withFileLock(lock, async () => 'ran'), 'ran');
  assert.equal(existsSync(lock), false);

  const order: string[] = [];
  let waited = false;
  const first = withFileLock(lock, async () => {
    order.push('first');
    await sleep(200);
  });
  await sleep(20);
  await withFileLock(
    lock,
    async () => order.push('second'),
    () => (waited = true),
  );
  await first;
  assert.deepEqual(order, ['first', 'second']);
  assert.ok(waited);
});
