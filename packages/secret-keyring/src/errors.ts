import { CodedError } from '@sluice/errors';

/** Typed errors of the keyring. None carries key bytes, a plaintext or a ciphertext. */
export class KeyringError extends CodedError {}

/** The keyring's configuration is wrong: names the field and the variable or file, never a value. */
export class KeyringConfigError extends KeyringError {
  readonly field: string;
  readonly problem: string;
  constructor(field: string, problem: string, options?: ErrorOptions) {
    // Not retryable: a key does not get valid by reading it again; fix the variable or the file.
    super('keyring_config_invalid', `${field}: ${problem}`, false, options);
    this.field = field;
    this.problem = problem;
  }
}

/** A ciphertext names a key the ring does not hold (removed too early, or written by another ring). */
export class UnknownKeyError extends KeyringError {
  readonly keyId: string;
  constructor(keyId: string, known: readonly string[]) {
    super(
      'keyring_unknown_key',
      `ciphertext was written under key ${JSON.stringify(keyId)}, which the keyring does not hold (it holds ${known.map((id) => JSON.stringify(id)).join(', ')})`,
      false,
    );
    this.keyId = keyId;
  }
}

/** A string that is not a ciphertext of this format (`v1.<keyId>.<iv>.<ciphertext+tag>`). */
export class MalformedCiphertextError extends KeyringError {
  constructor(problem: string) {
    super('keyring_ciphertext_malformed', `not a keyring ciphertext: ${problem}`, false);
  }
}

/**
 * A ciphertext that does not authenticate: changed, encrypted under other bytes with the same key
 * id, or read in another context than it was written for (moved to another record or field).
 */
export class DecryptionError extends KeyringError {
  readonly keyId: string;
  constructor(keyId: string) {
    super(
      'keyring_decryption_failed',
      `ciphertext under key ${JSON.stringify(keyId)} does not authenticate: changed, written with other key bytes, or moved from another record or field`,
      false,
    );
    this.keyId = keyId;
  }
}
