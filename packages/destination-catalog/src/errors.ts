import { CodedError } from '@sluice/errors';

/** Typed errors of the destination catalog. */
export class CatalogError extends CodedError {}

/**
 * A record of the catalog topic that cannot be taken: not JSON, another format, a plain secret,
 * a secret that does not decrypt, or a definition the config's rules refuse. Names the record's
 * key and the field, never a secret.
 */
export class CatalogRecordError extends CatalogError {
  readonly key: string;
  constructor(key: string, problem: string, options?: ErrorOptions) {
    super('catalog_record_invalid', `catalog record ${JSON.stringify(key)}: ${problem}`, false, options);
    this.key = key;
  }
}

/**
 * A reader did not read the topic up to an offset in time. For a change, it may be in force or not:
 * read the destination again before trying once more.
 */
export class CatalogTimeoutError extends CatalogError {
  constructor(offset: number, timeoutMs: number) {
    super('catalog_timeout', `the catalog was not read up to offset ${offset} within ${timeoutMs} ms`, true);
  }
}

/** A change was written but its reader could not read it back (its keyring lacks the key that wrote it). */
export class CatalogUnreadError extends CatalogError {
  constructor(key: string) {
    super('catalog_write_unread', `catalog record ${JSON.stringify(key)} was written but not read back`, false);
  }
}

/**
 * The catalog holds records in force that the keyring cannot decrypt: the service was given keys
 * other than those that wrote them. A start refuses rather than run without those destinations.
 */
export class CatalogKeyringError extends CatalogError {
  constructor(undecryptable: readonly CatalogRecordError[]) {
    const [first] = undecryptable;
    super(
      'catalog_keyring_mismatch',
      `runtimeDestinations.keyring: ${undecryptable.length} record(s) in force in the catalog cannot be decrypted with the keys given; the first: ${first?.message}. Start with the keys that wrote them (every replica reads with the same keyring).`,
      false,
    );
  }
}
