import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { inspect } from 'node:util';
import {
  DecryptionError,
  Keyring,
  KeyringConfigError,
  KeyringError,
  MalformedCiphertextError,
  UnknownKeyError,
} from '@sluice/secret-keyring';

const keyA = randomBytes(32);
const keyB = randomBytes(32);
const ring = new Keyring([{ id: 'k1', key: keyA }]);

/** Replaces part `index` of a ciphertext. */
function withPart(ciphertext: string, index: number, part: string): string {
  const parts = ciphertext.split('.');
  parts[index] = part;
  return parts.join('.');
}

/** A base64url string with one character changed (to another that keeps it canonical). */
function flipped(part: string, at = 0): string {
  const bytes = Buffer.from(part, 'base64url');
  bytes[at] = bytes[at]! ^ 0x01;
  return bytes.toString('base64url');
}

describe('keyring: encryption', () => {
  it('round-trips text, empty text and Unicode, with a fresh IV each time', () => {
    for (const plaintext of ['whsec_abc', '', 'Ünïcode ✓ and a long one '.repeat(200)]) {
      assert.equal(ring.decrypt(ring.encrypt(plaintext, 'orders:url'), 'orders:url'), plaintext);
    }
    const one = ring.encrypt('same', 'c');
    const two = ring.encrypt('same', 'c');
    assert.notEqual(one, two);
    assert.notEqual(one.split('.')[2], two.split('.')[2], 'IVs differ');
  });

  it('writes v1.<keyId>.<iv>.<ciphertext+tag> in base64url, with a 12-byte IV', () => {
    const ciphertext = ring.encrypt('secret');
    const [version, keyId, iv, sealed] = ciphertext.split('.') as [string, string, string, string];
    assert.equal(version, 'v1');
    assert.equal(keyId, 'k1');
    assert.equal(Buffer.from(iv, 'base64url').length, 12);
    assert.equal(Buffer.from(sealed, 'base64url').length, 'secret'.length + 16);
    assert.match(ciphertext, /^[A-Za-z0-9_.-]+$/);
    assert.equal(ring.keyIdOf(ciphertext), 'k1');
  });

  it('a context is bound: another context, or none, does not decrypt', () => {
    const ciphertext = ring.encrypt('secret', 'orders:settings.sharedSecret');
    assert.throws(() => ring.decrypt(ciphertext, 'billing:settings.sharedSecret'), DecryptionError);
    assert.throws(() => ring.decrypt(ciphertext), DecryptionError);
    assert.throws(() => ring.decrypt(ring.encrypt('secret'), 'orders'), DecryptionError);
  });
});

describe('keyring: rotation', () => {
  it('a key prepended encrypts from then on; what the old key wrote is still read', () => {
    const old = ring.encrypt('old secret', 'c');
    const rotated = new Keyring([
      { id: 'k2', key: keyB },
      { id: 'k1', key: keyA },
    ]);
    assert.equal(rotated.currentKeyId, 'k2');
    assert.deepEqual(rotated.keyIds, ['k2', 'k1']);
    assert.equal(rotated.decrypt(old, 'c'), 'old secret');
    const fresh = rotated.encrypt('new secret', 'c');
    assert.equal(rotated.keyIdOf(fresh), 'k2');
    assert.equal(rotated.decrypt(fresh, 'c'), 'new secret');
    assert.throws(
      () => ring.decrypt(fresh, 'c'),
      (err) => err instanceof UnknownKeyError && err.keyId === 'k2' && err.code === 'keyring_unknown_key',
    );
  });

  it('a key removed from the ring leaves what it wrote unreadable, naming its id', () => {
    const retired = new Keyring([{ id: 'k2', key: keyB }]);
    assert.throws(
      () => retired.decrypt(ring.encrypt('x')),
      /key "k1", which the keyring does not hold \(it holds "k2"\)/,
    );
  });

  it('the same id with other bytes does not decrypt', () => {
    const impostor = new Keyring([{ id: 'k1', key: keyB }]);
    assert.throws(() => impostor.decrypt(ring.encrypt('x')), DecryptionError);
  });
});

describe('keyring: a ciphertext changed in any part is refused', () => {
  const ciphertext = ring.encrypt('secret', 'ctx');
  const [, , iv, sealed] = ciphertext.split('.') as [string, string, string, string];
  const other = new Keyring([
    { id: 'k1', key: keyA },
    { id: 'k9', key: keyB },
  ]);
  const cases: [string, string, new (...args: never[]) => KeyringError][] = [
    ['the version', withPart(ciphertext, 0, 'v2'), MalformedCiphertextError],
    ['the key id, to an unknown one', withPart(ciphertext, 1, 'k7'), UnknownKeyError],
    ['the key id, to a malformed one', withPart(ciphertext, 1, 'k 1'), MalformedCiphertextError],
    ['the IV', withPart(ciphertext, 2, flipped(iv)), DecryptionError],
    ['the IV, shortened', withPart(ciphertext, 2, iv.slice(0, 12)), MalformedCiphertextError],
    ['the IV, not base64url', withPart(ciphertext, 2, `${iv.slice(0, 15)}+`), MalformedCiphertextError],
    ['the ciphertext', withPart(ciphertext, 3, flipped(sealed)), DecryptionError],
    ['the tag', withPart(ciphertext, 3, flipped(sealed, Buffer.from(sealed, 'base64url').length - 1)), DecryptionError],
    ['the ciphertext, cut below a tag', withPart(ciphertext, 3, 'AAAA'), MalformedCiphertextError],
    ['a part added', `${ciphertext}.x`, MalformedCiphertextError],
    ['a part removed', ciphertext.split('.').slice(0, 3).join('.'), MalformedCiphertextError],
    ['not a ciphertext at all', 'https://hooks.example.com/', MalformedCiphertextError],
  ];
  for (const [name, changed, kind] of cases) {
    it(name, () => {
      assert.throws(
        () => ring.decrypt(changed, 'ctx'),
        (err) => err instanceof kind && err instanceof KeyringError && err.retryable === false,
      );
    });
  }

  it('the key id, to another key of the ring', () => {
    assert.throws(() => other.decrypt(withPart(ciphertext, 1, 'k9'), 'ctx'), DecryptionError);
  });
});

describe('keyring: keys', () => {
  it('refuses no key, a duplicate id, a bad id and a key of another length, naming the field', () => {
    const refused = (keys: ConstructorParameters<typeof Keyring>[0], field: string) =>
      assert.throws(
        () => new Keyring(keys),
        (err) => err instanceof KeyringConfigError && err.field === field && err.code === 'keyring_config_invalid',
      );
    refused([], 'keys');
    refused(
      [
        { id: 'k1', key: keyA },
        { id: 'k1', key: keyB },
      ],
      'keys[1].id',
    );
    refused([{ id: 'k.1', key: keyA }], 'keys[0].id');
    refused([{ id: 'k1', key: randomBytes(16) }], 'keys[0].key');
  });

  it('String(), JSON and inspect show the ids, never the key bytes', () => {
    const rotated = new Keyring([
      { id: 'k2', key: keyB },
      { id: 'k1', key: keyA },
    ]);
    const shown = [
      String(rotated),
      `${rotated}`,
      JSON.stringify(rotated),
      JSON.stringify({ rotated }),
      inspect(rotated, { showHidden: true, depth: Infinity }),
      inspect({ rotated }, { showHidden: true, depth: Infinity }),
    ];
    assert.deepEqual(JSON.parse(JSON.stringify(rotated)), { keyIds: ['k2', 'k1'], currentKeyId: 'k2' });
    for (const text of shown) {
      assert.match(text, /k2/);
      for (const key of [keyA, keyB]) {
        for (const encoding of ['hex', 'base64', 'base64url'] as const) {
          assert.ok(!text.includes(key.toString(encoding).slice(0, 16)), `${encoding} key bytes in ${text}`);
        }
      }
    }
  });
});

describe('Keyring signing', () => {
  it('signs with the newest key under a subkey per purpose; verifies with any key still in the ring, refuses a changed byte, another purpose or a dropped key', () => {
    const old = new Keyring([{ id: 'k1', key: keyA }]);
    const signed = old.sign('tenant=a', 'portal-link');
    assert.equal(signed.keyId, 'k1');
    assert.ok(old.verify({ ...signed, data: 'tenant=a' }, 'portal-link'));
    assert.ok(!old.verify({ ...signed, data: 'tenant=b' }, 'portal-link'), 'other data');
    assert.ok(!old.verify({ ...signed, data: 'tenant=a' }, 'other-purpose'), 'other purpose');
    assert.ok(
      !old.verify({ keyId: 'k1', data: 'tenant=a', mac: flipped(signed.mac) }, 'portal-link'),
      'a changed byte',
    );
    assert.ok(!old.verify({ keyId: 'k1', data: 'tenant=a', mac: signed.mac.slice(1) }, 'portal-link'), 'a shorter mac');
    // Rotated: the new key signs, the old one still verifies; once dropped, it verifies nothing.
    const rotated = new Keyring([
      { id: 'k2', key: keyB },
      { id: 'k1', key: keyA },
    ]);
    assert.equal(rotated.sign('x', 'portal-link').keyId, 'k2');
    assert.ok(rotated.verify({ ...signed, data: 'tenant=a' }, 'portal-link'));
    const dropped = new Keyring([{ id: 'k2', key: keyB }]);
    assert.ok(!dropped.verify({ ...signed, data: 'tenant=a' }, 'portal-link'));
    // The subkey is not the key itself: an HMAC under the raw key does not verify.
    const raw = createHmac('sha256', keyA).update('tenant=a').digest('base64url');
    assert.ok(!old.verify({ keyId: 'k1', data: 'tenant=a', mac: raw }, 'portal-link'));
  });
});
