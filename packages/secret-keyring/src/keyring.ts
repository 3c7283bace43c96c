import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  hkdfSync,
  type KeyObject,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import { inspect } from 'node:util';
import { CIPHERTEXT_VERSION, IV_BYTES, KEY_BYTES, KEY_ID_PATTERN, TAG_BYTES } from './constants.ts';
import { DecryptionError, KeyringConfigError, MalformedCiphertextError, UnknownKeyError } from './errors.ts';

/** One key of a ring: its id, written in every ciphertext made with it, and its 32 bytes. */
export interface KeyringKey {
  id: string;
  key: Uint8Array;
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const ALGORITHM = 'aes-256-gcm';

/** What the tag binds besides the plaintext: the format version, the key id and the caller's context. */
function additionalData(keyId: string, context: string): Buffer {
  return Buffer.from(`sluice-keyring\0${CIPHERTEXT_VERSION}\0${keyId}\0${context}`, 'utf8');
}

/** Bytes of a base64url part, or a `MalformedCiphertextError` naming the part. */
function base64url(part: string, name: string): Buffer {
  const bytes = Buffer.from(part, 'base64url');
  if (!BASE64URL.test(part) || bytes.toString('base64url') !== part)
    throw new MalformedCiphertextError(`its ${name} is not base64url`);
  return bytes;
}

/** The parts of a ciphertext, checked for form only. */
function split(ciphertext: string): { keyId: string; iv: Buffer; sealed: Buffer } {
  const parts = ciphertext.split('.');
  if (parts.length !== 4) throw new MalformedCiphertextError(`${parts.length} dot-separated parts, expected 4`);
  const [version, keyId, iv, sealed] = parts as [string, string, string, string];
  if (version !== CIPHERTEXT_VERSION)
    throw new MalformedCiphertextError(
      `version ${JSON.stringify(version.slice(0, 8))}, expected ${CIPHERTEXT_VERSION}`,
    );
  if (!KEY_ID_PATTERN.test(keyId)) throw new MalformedCiphertextError('its key id is not a key id');
  const ivBytes = base64url(iv, 'IV');
  if (ivBytes.length !== IV_BYTES) throw new MalformedCiphertextError(`an IV of ${ivBytes.length} bytes`);
  const sealedBytes = base64url(sealed, 'ciphertext');
  if (sealedBytes.length < TAG_BYTES) throw new MalformedCiphertextError('shorter than its tag');
  return { keyId, iv: ivBytes, sealed: sealedBytes };
}

/**
 * Secrets encrypted at rest with AES-256-GCM (docs/reference/runtime-destinations.md, "Encryption").
 * The first key is the newest: every encryption uses it. Decryption takes any key of the ring, the
 * one whose id the ciphertext names, so a ring with a new key prepended still reads what its older
 * keys wrote. Each ciphertext is `v1.<keyId>.<iv>.<ciphertext+tag>` (base64url), with a random IV;
 * its tag binds the version, the key id and a context the caller gives (the record and field it
 * belongs to), so a ciphertext moved elsewhere does not decrypt. The key bytes are held in private
 * fields: neither `String()`, JSON nor `inspect` of a ring shows them.
 */
export class Keyring {
  readonly #keys: ReadonlyMap<string, KeyObject>;
  /** Signing subkeys derived per key and purpose (`#subkey`). */
  readonly #subkeys = new Map<string, Buffer>();
  /** The ids of the ring's keys, newest (the one that encrypts) first. */
  readonly keyIds: readonly string[];

  constructor(keys: readonly KeyringKey[]) {
    if (keys.length === 0) throw new KeyringConfigError('keys', 'at least one key is required');
    const held = new Map<string, KeyObject>();
    keys.forEach(({ id, key }, i) => {
      if (!KEY_ID_PATTERN.test(id))
        throw new KeyringConfigError(`keys[${i}].id`, `must match ${KEY_ID_PATTERN.source}, got ${JSON.stringify(id)}`);
      if (held.has(id)) throw new KeyringConfigError(`keys[${i}].id`, `duplicate key id ${JSON.stringify(id)}`);
      if (key.length !== KEY_BYTES)
        throw new KeyringConfigError(`keys[${i}].key`, `must be ${KEY_BYTES} bytes, got ${key.length}`);
      held.set(id, createSecretKey(key));
    });
    this.#keys = held;
    this.keyIds = Object.freeze(keys.map((k) => k.id));
  }

  /** The id of the key new encryptions use: the first of the ring. */
  get currentKeyId(): string {
    return this.keyIds[0]!;
  }

  /** Encrypts `plaintext` under the newest key, bound to `context` (default `''`): decrypt with the same context. */
  encrypt(plaintext: string, context = ''): string {
    const keyId = this.currentKeyId;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.#keys.get(keyId)!, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(additionalData(keyId, context));
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return [CIPHERTEXT_VERSION, keyId, iv.toString('base64url'), sealed.toString('base64url')].join('.');
  }

  /**
   * The plaintext of a ciphertext written by a ring holding its key, with the same `context`.
   * Throws `MalformedCiphertextError`, `UnknownKeyError` or `DecryptionError`.
   */
  decrypt(ciphertext: string, context = ''): string {
    const { keyId, iv, sealed } = split(ciphertext);
    const key = this.#keys.get(keyId);
    if (key === undefined) throw new UnknownKeyError(keyId, this.keyIds);
    const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(additionalData(keyId, context));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      throw new DecryptionError(keyId);
    }
  }

  /**
   * An HMAC-SHA256 of `data` (base64url) under the newest key's subkey for `purpose`, with that
   * key's id: a signed token names the key so a ring that still holds it verifies it after a
   * rotation, and one that dropped it refuses it. Each purpose signs with its own subkey (HKDF-SHA256
   * of the key, the purpose as its info), never with the encryption key itself.
   */
  sign(data: string, purpose: string): { keyId: string; mac: string } {
    const keyId = this.currentKeyId;
    return { keyId, mac: this.#mac({ keyId, data, purpose }) };
  }

  /** Whether `mac` is `sign`'s answer for `data` and `purpose` under the key `keyId` (false for a key not in the ring). */
  verify(signed: { keyId: string; data: string; mac: string }, purpose: string): boolean {
    if (!this.#keys.has(signed.keyId)) return false;
    const expected = Buffer.from(this.#mac({ keyId: signed.keyId, data: signed.data, purpose }), 'base64url');
    const given = Buffer.from(signed.mac, 'base64url');
    // Only the canonical spelling: base64url's last character carries spare bits another letter could set.
    if (given.toString('base64url') !== signed.mac) return false;
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  #mac(what: { keyId: string; data: string; purpose: string }): string {
    return createHmac('sha256', this.#subkey(what.keyId, what.purpose)).update(what.data, 'utf8').digest('base64url');
  }

  #subkey(keyId: string, purpose: string): Buffer {
    const id = `${keyId}\u0000${purpose}`;
    let subkey = this.#subkeys.get(id);
    if (subkey === undefined) {
      const key = this.#keys.get(keyId)!.export();
      subkey = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `sluice-keyring-mac\u0000${purpose}`, 32));
      this.#subkeys.set(id, subkey);
    }
    return subkey;
  }

  /** The key id a ciphertext names (to find what a retired key still holds); throws `MalformedCiphertextError`. */
  keyIdOf(ciphertext: string): string {
    return split(ciphertext).keyId;
  }

  toJSON(): { keyIds: readonly string[]; currentKeyId: string } {
    return { keyIds: this.keyIds, currentKeyId: this.currentKeyId };
  }

  toString(): string {
    return `Keyring(${this.keyIds.join(', ')}; encrypts with ${this.currentKeyId})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}
