import { hash, randomBytes } from 'node:crypto';
import { WEBHOOK_SECRET_PREFIX } from '@sluice/webhook-signature';
import { GENERATED_SECRET_BYTES, WRITE_KEY_BYTES, WRITE_KEY_ID_BYTES } from './constants.ts';

/**
 * A new Standard Webhooks secret: `whsec_` and the standard base64 (with padding) of 32 random
 * bytes, the form the config accepts for `signing.standardWebhooks.secrets[].secret`.
 */
export function generateWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(GENERATED_SECRET_BYTES).toString('base64')}`;
}

/** A new X-Signature secret: 32 random bytes as 64 lowercase hex characters (its UTF-8 bytes key the HMAC). */
export function generateSharedSecret(): string {
  return randomBytes(GENERATED_SECRET_BYTES).toString('hex');
}

/** The prefix of every minted write key: tells a write key from another secret (in a leak scan, a log). */
export const WRITE_KEY_PREFIX = 'sk_';

/** A new write key: `sk_` and the base64url (no padding) of 32 random bytes, 46 characters. */
export function generateWriteKey(): string {
  return `${WRITE_KEY_PREFIX}${randomBytes(WRITE_KEY_BYTES).toString('base64url')}`;
}

/** A new write key's public id: `wk_` and 12 hex characters. It names the key; it says nothing of it. */
export function generateWriteKeyId(): string {
  return `wk_${randomBytes(WRITE_KEY_ID_BYTES).toString('hex')}`;
}

/**
 * What is kept of a secret shown once (a write key, an API token): the SHA-256 of its UTF-8 bytes,
 * 64 lowercase hex characters, and what a presented one is looked up by.
 */
export function secretDigest(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/**
 * What is kept of a write key (`secretDigest`). What ingest looks a presented key up by, so a
 * file's key and a minted one are found the same way.
 */
export function writeKeyDigest(key: string): string {
  return secretDigest(key);
}
