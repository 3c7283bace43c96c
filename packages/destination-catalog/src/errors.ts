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
