import { KEYRING_KEY_ID_PATTERN } from '@sluice/config';

/** AES-256-GCM: a key of 32 bytes, a random 12-byte IV per encryption, a 16-byte tag. */
export const KEY_BYTES = 32;
export const IV_BYTES = 12;
export const TAG_BYTES = 16;

/** The first part of every ciphertext (`v1.<keyId>.<iv>.<ciphertext+tag>`); another version is refused. */
export const CIPHERTEXT_VERSION = 'v1';

/** A key id, as the config's schema checks it (`KEYRING_KEY_ID_PATTERN`). */
export const KEY_ID_PATTERN = new RegExp(KEYRING_KEY_ID_PATTERN);

/** Random bytes of a generated signing secret: the Standard Webhooks range is 24–64, 32 is what `openssl rand` examples use. */
export const GENERATED_SECRET_BYTES = 32;

/**
 * Random bytes of a write key minted for a runtime source: 32 (256 bits), so the key's SHA-256 is
 * all that needs keeping: no guess or table finds a key from it.
 */
export const WRITE_KEY_BYTES = 32;

/** Random bytes of a write key's public id: 6 (12 hex characters), unique within its source. */
export const WRITE_KEY_ID_BYTES = 6;
