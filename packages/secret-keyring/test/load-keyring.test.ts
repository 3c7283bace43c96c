import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { KeyringConfigError, loadKeyring } from '@sluice/secret-keyring';

const bytes = randomBytes(32);
const dir = mkdtempSync(join(tmpdir(), 'sluice-keyring-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A file holding `text`; its path. */
function keyFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** The `KeyringConfigError` loading `config` throws; fails the test when there is none. */
function refusal(config: unknown, env: NodeJS.ProcessEnv = {}): KeyringConfigError {
  try {
    loadKeyring(config, { env });
  } catch (err) {
    assert.ok(err instanceof KeyringConfigError, String(err));
    return err;
  }
  assert.fail('loaded');
}

describe('keyring: keys from the environment and from files', () => {
  it('reads hex, base64 and base64url keys, a file with its trailing line break', () => {
    const env = {
      HEX: bytes.toString('hex'),
      HEX_UPPER: bytes.toString('hex').toUpperCase(),
      B64: bytes.toString('base64'),
      B64URL: bytes.toString('base64url'),
    };
    const file = keyFile('key', `${bytes.toString('base64')}\n`);
    const refs = [{ env: 'HEX' }, { env: 'HEX_UPPER' }, { env: 'B64' }, { env: 'B64URL' }, { file }];
    const rings = refs.map((key) => loadKeyring([{ id: 'k1', key }], { env }));
    const ciphertext = rings[0]!.encrypt('secret', 'ctx');
    for (const ring of rings) assert.equal(ring.decrypt(ciphertext, 'ctx'), 'secret', 'the same 32 bytes');
    const both = loadKeyring(
      [
        { id: 'k2', key: { env: 'B64' } },
        { id: 'k1', key: { env: 'HEX' } },
      ],
      { env },
    );
    assert.deepEqual(both.keyIds, ['k2', 'k1']);
    assert.equal(both.decrypt(ciphertext, 'ctx'), 'secret');
  });

  it('a missing variable names the field and the variable', () => {
    const err = refusal([{ id: 'k1', key: { env: 'KEYRING_KEY_1' } }]);
    assert.equal(err.field, 'keyring.keys[0].key');
    assert.match(err.message, /^keyring\.keys\[0\]\.key: environment variable KEYRING_KEY_1 is not set$/);
  });

  it('an unreadable or empty file names the field and the file', () => {
    const missing = join(dir, 'nope');
    assert.match(
      refusal([{ id: 'k1', key: { file: missing } }]).message,
      new RegExp(`cannot read secret file ${missing}`),
    );
    const empty = keyFile('empty', '\n');
    assert.match(refusal([{ id: 'k1', key: { file: empty } }]).message, /secret file .*empty is empty/);
    if (process.getuid?.() !== 0) {
      const locked = keyFile('locked', bytes.toString('hex'));
      chmodSync(locked, 0o000);
      assert.match(
        refusal([{ id: 'k1', key: { file: locked } }]).message,
        /cannot read secret file .*locked \(EACCES\)/,
      );
    }
  });

  it('anything but 32 bytes as hex or base64 is refused, naming the variable or file, never the value', () => {
    const bad = {
      SHORT_HEX: randomBytes(16).toString('hex'),
      LONG_B64: randomBytes(33).toString('base64'),
      ODD: `${bytes.toString('hex').slice(0, 63)}g`,
      SPACED: ` ${bytes.toString('base64')}`,
      MIXED: bytes.toString('base64').replace(/.$/, '-'),
      PASSPHRASE: 'correct horse battery staple, correct horse battery staple!!!!!',
    };
    for (const [name, value] of Object.entries(bad)) {
      const err = refusal([{ id: 'k1', key: { env: name } }], bad);
      assert.equal(err.field, 'keyring.keys[0].key');
      assert.match(err.message, new RegExp(`environment variable ${name} must hold 32 bytes as 64 hex characters`));
      assert.ok(!err.message.includes(value.trim().slice(0, 12)), `${name}: the value is in ${err.message}`);
    }
    const file = keyFile('short', randomBytes(31).toString('base64'));
    assert.match(refusal([{ id: 'k1', key: { file } }]).message, new RegExp(`file ${file} must hold 32 bytes`));
  });

  it('refuses a key written in the config, an empty list, a bad or duplicate id, naming the field', () => {
    const env = { K: bytes.toString('hex') };
    const literal = refusal([{ id: 'k1', key: bytes.toString('hex') }], env);
    assert.equal(literal.field, 'keyring.keys[0].key');
    assert.match(literal.problem, /never written in the config itself/);
    assert.ok(!literal.message.includes(bytes.toString('hex')));
    assert.equal(refusal([{ id: 'k1', key: { env: 'K', file: '/x' } }], env).field, 'keyring.keys[0].key');
    assert.equal(refusal([], env).field, 'keyring.keys');
    assert.equal(refusal({ id: 'k1' }, env).field, 'keyring.keys');
    assert.equal(refusal(['k1'], env).field, 'keyring.keys[0]');
    assert.equal(refusal([{ id: 'a.b', key: { env: 'K' } }], env).field, 'keyring.keys[0].id');
    const twice = [
      { id: 'k1', key: { env: 'K' } },
      { id: 'k1', key: { env: 'K' } },
    ];
    assert.equal(refusal(twice, env).field, 'keyring.keys[1].id');
    assert.throws(
      () => loadKeyring([{ id: 'k1', key: { env: 'NOPE' } }], { env: {}, field: 'secrets.keyring' }),
      /^KeyringConfigError: secrets\.keyring\[0\]\.key: /,
    );
  });
});
