import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigStore, parseConfig } from '@sluice/config';
import { KeyringConfigError } from '@sluice/secret-keyring';
import { runtimeKeyring } from '../src/runtime-keyring.ts';

const store = (keyring: unknown, env: NodeJS.ProcessEnv) =>
  new ConfigStore(undefined, parseConfig(keyring === undefined ? {} : { runtimeDestinations: { keyring } }, {}), env);
const refusal = (message: string) => (err: unknown) => err instanceof KeyringConfigError && err.message === message;

describe('the runtime destinations’ keyring, read at start', () => {
  it('none without the section', () => {
    assert.equal(runtimeKeyring(store(undefined, {})), undefined);
  });

  it('keys from variables and files of the store’s environment, the first encrypting', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-keyring-'));
    try {
      writeFileSync(join(dir, 'k1'), `${randomBytes(32).toString('base64')}\n`);
      const keyring = runtimeKeyring(
        store(
          [
            { id: 'k2', key: { env: 'KEY_K2' } },
            { id: 'k1', key: { file: join(dir, 'k1') } },
          ],
          { KEY_K2: randomBytes(32).toString('hex') },
        ),
      )!;
      assert.equal(keyring.keyIdOf(keyring.encrypt('secret', 'ctx')), 'k2');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a key that cannot be loaded is refused naming the field and the variable or file, never the value', () => {
    assert.throws(
      () => runtimeKeyring(store([{ id: 'k1', key: { env: 'MISSING_KEY' } }], {})),
      refusal('runtimeDestinations.keyring[0].key: environment variable MISSING_KEY is not set'),
    );
    assert.throws(
      () => runtimeKeyring(store([{ id: 'k1', key: { env: 'SHORT_KEY' } }], { SHORT_KEY: 'abc123' })),
      (err) =>
        err instanceof KeyringConfigError &&
        err.message.startsWith(
          'runtimeDestinations.keyring[0].key: environment variable SHORT_KEY must hold 32 bytes',
        ) &&
        !err.message.includes('abc123'),
    );
    assert.throws(
      () => runtimeKeyring(store([{ id: 'k1', key: { file: '/nonexistent/sluice-key' } }], {})),
      (err) =>
        err instanceof KeyringConfigError &&
        err.message.startsWith('runtimeDestinations.keyring[0].key: cannot read secret file /nonexistent/sluice-key'),
    );
  });
});

describe('a service whose keyring cannot be loaded', () => {
  it('refuses to start: one line naming the field and the variable, exit 1, before anything waits for Kafka', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-keyring-'));
    try {
      const config = join(dir, 'config.json');
      writeFileSync(
        config,
        JSON.stringify({ runtimeDestinations: { keyring: [{ id: 'k1', key: { env: 'NO_SUCH_KEY' } }] } }),
      );
      const index = resolve(import.meta.dirname, '../src/index.ts');
      const child = spawnSync(
        process.execPath,
        ['--input-type=module', '-e', `(await import(${JSON.stringify(index)})).loadServiceContext('deliverer');`],
        { env: { PATH: process.env.PATH, SLUICE_CONFIG: config }, encoding: 'utf8', timeout: 10_000 },
      );
      assert.equal(child.status, 1, child.stderr);
      assert.equal(
        child.stderr,
        'deliverer: invalid configuration: runtimeDestinations.keyring[0].key: environment variable NO_SUCH_KEY is not set\n',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
