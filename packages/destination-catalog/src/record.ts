import { randomBytes } from 'node:crypto';
import { ConfigError, validateDestination } from '@sluice/config';
import { type Keyring, KeyringError } from '@sluice/secret-keyring';
import { KEY_NONCE_BYTES, MAX_RECORD_BYTES, MAX_UPDATED_BY_CHARS, RECORD_FORMAT } from './constants.ts';
import { CatalogRecordError } from './errors.ts';
import { isObject, type JsonObject, mapSecrets } from './secret-fields.ts';

/** One destination of the catalog, as held in memory: its secrets in clear. */
export interface CatalogEntry {
  /** The destination's id, the start of its records' keys. */
  id: string;
  /**
   * 1 when created, one more at each change, the deletion included (a destination created again
   * under the id goes on from its deletion's version): what a change's expected version is compared with.
   */
  version: number;
  /**
   * The definition as it was given: the shape of one entry of the config file's `destinations`
   * (defaults not filled in, so a default changed later applies to it as to the file's).
   */
  definition: JsonObject;
  /** When it last changed, RFC 3339 in UTC. */
  updatedAt: string;
  /** Who changed it last, as the caller names them. */
  updatedBy: string;
}

/**
 * A record of the catalog topic. Its key is `<id>@<nonce>`, new for every record written, so that
 * compaction never lets a change that lost a race replace the one that won (docs/reference/
 * runtime-destinations.md, "Topic"); a null value clears a record no longer in force.
 */
export interface CatalogRecord {
  key: string;
  value: string | null;
}

/** A deletion: the version it takes the destination to, when and by whom. */
export interface DeletionMark {
  id: string;
  version: number;
  updatedAt: string;
  updatedBy: string;
}

/** A record as a consumer hands it over. */
export interface RawCatalogRecord {
  key: Buffer | string | null;
  value: Buffer | string | null;
}

/**
 * What a record says, with its key: the destination as it now is, that it was deleted (at a
 * version), or that the record of the key is cleared (a null value).
 */
export type ParsedRecord =
  | { kind: 'entry'; key: string; entry: CatalogEntry }
  | { kind: 'deleted'; key: string; mark: DeletionMark }
  | { kind: 'cleared'; key: string; id: string };

/** A new key for a record of destination `id`: `<id>@<16 hex characters>` (ids never hold `@`). */
export function recordKey(id: string): string {
  return `${id}@${randomBytes(KEY_NONCE_BYTES).toString('hex')}`;
}

/** The destination id a record key names, or undefined for a key of another form. */
export function idOfKey(key: string): string | undefined {
  const at = key.lastIndexOf('@');
  return at > 0 && at < key.length - 1 ? key.slice(0, at) : undefined;
}

/** A secret in a record: its ciphertext, never the secret. */
interface EncryptedSecret {
  encrypted: string;
}

/** What a secret's ciphertext is bound to: its destination and its field, so it cannot be moved to another. */
const secretContext = (id: string, field: string) => `destination:${id}:${field}`;

/**
 * The record of an entry: the value is JSON `{ format, id, version, updatedAt, updatedBy,
 * definition }`, every secret of the definition replaced by `{ "encrypted": "v1.<keyId>.…" }` under
 * the keyring's newest key (docs/reference/runtime-destinations.md, "Record").
 */
export function serializeEntry(entry: CatalogEntry, keyring: Keyring): CatalogRecord {
  const definition = mapSecrets(entry.definition, (field, value): EncryptedSecret => {
    if (typeof value !== 'string') throw new CatalogRecordError(entry.id, `${field}: only a literal secret is stored`);
    return { encrypted: keyring.encrypt(value, secretContext(entry.id, field)) };
  });
  const { id, version, updatedAt, updatedBy } = entry;
  const value = JSON.stringify({ format: RECORD_FORMAT, id, version, updatedAt, updatedBy, definition });
  return { key: recordKey(id), value };
}

/**
 * The record of a deletion: `{ format, id, version, deleted: true, updatedAt, updatedBy }`. Not a
 * null value: a deletion carries its version like any change, and stays as the id's record in force,
 * so a change based on the destination before it is refused like any stale change.
 */
export function deletionRecord(mark: DeletionMark): CatalogRecord {
  const { id, version, updatedAt, updatedBy } = mark;
  return {
    key: recordKey(id),
    value: JSON.stringify({ format: RECORD_FORMAT, id, version, deleted: true, updatedAt, updatedBy }),
  };
}

/** The record that clears one record no longer in force (its key, a null value), for compaction to remove both. */
export function clearingRecord(key: string): CatalogRecord {
  return { key, value: null };
}

const text = (v: Buffer | string) => (typeof v === 'string' ? v : v.toString('utf8'));

/** The envelope of a record's value, checked field by field: a deletion's, or an entry's with its definition. */
function envelope(key: string, value: string): DeletionMark & { deleted?: true; definition?: JsonObject } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new CatalogRecordError(key, 'value is not JSON');
  }
  if (!isObject(parsed)) throw new CatalogRecordError(key, 'value is not a JSON object');
  const { format, id, version, updatedAt, updatedBy, definition, deleted } = parsed;
  if (format !== RECORD_FORMAT)
    throw new CatalogRecordError(key, `format ${JSON.stringify(format)}, expected ${RECORD_FORMAT}`);
  if (typeof id !== 'string' || id !== idOfKey(key))
    throw new CatalogRecordError(key, 'id differs from the record key');
  if (!Number.isSafeInteger(version) || (version as number) < 1)
    throw new CatalogRecordError(key, 'version must be an integer ≥ 1');
  if (typeof updatedAt !== 'string' || Number.isNaN(Date.parse(updatedAt)))
    throw new CatalogRecordError(key, 'updatedAt must be an RFC 3339 time');
  if (typeof updatedBy !== 'string' || updatedBy === '' || updatedBy.length > MAX_UPDATED_BY_CHARS)
    throw new CatalogRecordError(key, `updatedBy must be 1–${MAX_UPDATED_BY_CHARS} characters`);
  const mark = { id, version: version as number, updatedAt, updatedBy };
  if (deleted === true) {
    if (definition !== undefined) throw new CatalogRecordError(key, 'a deletion has no definition');
    return { ...mark, deleted };
  }
  if (deleted !== undefined) throw new CatalogRecordError(key, 'deleted must be true when present');
  if (!isObject(definition)) throw new CatalogRecordError(key, 'definition is not a JSON object');
  return { ...mark, definition };
}

/**
 * Reads a record of the catalog topic: its secrets decrypted (each bound to its destination and
 * field), its definition validated by the config's rules (sources are checked when it is merged
 * with the file in force). A value over `MAX_RECORD_BYTES` is refused unread, so what one
 * destination holds in memory stays bounded. Throws `CatalogRecordError` naming the key and the
 * field.
 */
export function parseRecord(record: RawCatalogRecord, keyring: Keyring): ParsedRecord {
  if (record.key === null) throw new CatalogRecordError('(none)', 'a record without a key');
  const key = text(record.key);
  const id = idOfKey(key);
  if (id === undefined) throw new CatalogRecordError(key, 'the key is not <id>@<nonce>');
  if (record.value === null) return { kind: 'cleared', key, id };
  const bytes = typeof record.value === 'string' ? Buffer.byteLength(record.value) : record.value.length;
  if (bytes > MAX_RECORD_BYTES)
    throw new CatalogRecordError(key, `value of ${bytes} bytes passes the limit of ${MAX_RECORD_BYTES}`);
  const { deleted, definition: stored, ...mark } = envelope(key, text(record.value));
  if (deleted) return { kind: 'deleted', key, mark };
  const definition = mapSecrets(stored!, (field, value) => {
    if (!isObject(value) || typeof value.encrypted !== 'string' || Object.keys(value).length !== 1)
      throw new CatalogRecordError(key, `definition.${field}: a secret must be stored encrypted`);
    try {
      return keyring.decrypt(value.encrypted, secretContext(id, field));
    } catch (err) {
      if (err instanceof KeyringError)
        throw new CatalogRecordError(key, `definition.${field}: ${err.message}`, { cause: err });
      throw err;
    }
  });
  try {
    validateDestination(definition);
  } catch (err) {
    if (err instanceof ConfigError)
      throw new CatalogRecordError(key, `definition.${err.field}: ${err.problem}`, { cause: err });
    throw err;
  }
  if (definition.id !== id) throw new CatalogRecordError(key, 'definition.id differs from the record key');
  return { kind: 'entry', key, entry: { ...mark, definition } };
}
