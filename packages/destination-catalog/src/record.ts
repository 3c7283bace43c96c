import { ConfigError, validateDestination } from '@sluice/config';
import { type Keyring, KeyringError } from '@sluice/secret-keyring';
import { MAX_UPDATED_BY_CHARS, RECORD_FORMAT } from './constants.ts';
import { CatalogRecordError } from './errors.ts';
import { isObject, type JsonObject, mapSecrets } from './secret-fields.ts';

/** One destination of the catalog, as held in memory: its secrets in clear. */
export interface CatalogEntry {
  /** The destination's id, also the record's key. */
  id: string;
  /** 1 when created, one more at each change: what a change's expected version is compared with. */
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

/** A record of the catalog topic: the destination's id as key; a null value is a tombstone (deleted). */
export interface CatalogRecord {
  key: string;
  value: string | null;
}

/** A record as a consumer hands it over. */
export interface RawCatalogRecord {
  key: Buffer | string | null;
  value: Buffer | string | null;
}

/** What a record says: the destination as it now is, or that it was deleted. */
export type ParsedRecord = { kind: 'entry'; entry: CatalogEntry } | { kind: 'tombstone'; id: string };

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
  return { key: id, value: JSON.stringify({ format: RECORD_FORMAT, id, version, updatedAt, updatedBy, definition }) };
}

/** The record that deletes a destination from the compacted topic. */
export function tombstone(id: string): CatalogRecord {
  return { key: id, value: null };
}

const text = (v: Buffer | string) => (typeof v === 'string' ? v : v.toString('utf8'));

/** The envelope of a record's value, checked field by field. */
function envelope(key: string, value: string): Omit<CatalogEntry, 'definition'> & { definition: JsonObject } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new CatalogRecordError(key, 'value is not JSON');
  }
  if (!isObject(parsed)) throw new CatalogRecordError(key, 'value is not a JSON object');
  const { format, id, version, updatedAt, updatedBy, definition } = parsed;
  if (format !== RECORD_FORMAT)
    throw new CatalogRecordError(key, `format ${JSON.stringify(format)}, expected ${RECORD_FORMAT}`);
  if (id !== key) throw new CatalogRecordError(key, 'id differs from the record key');
  if (!Number.isSafeInteger(version) || (version as number) < 1)
    throw new CatalogRecordError(key, 'version must be an integer ≥ 1');
  if (typeof updatedAt !== 'string' || Number.isNaN(Date.parse(updatedAt)))
    throw new CatalogRecordError(key, 'updatedAt must be an RFC 3339 time');
  if (typeof updatedBy !== 'string' || updatedBy === '' || updatedBy.length > MAX_UPDATED_BY_CHARS)
    throw new CatalogRecordError(key, `updatedBy must be 1–${MAX_UPDATED_BY_CHARS} characters`);
  if (!isObject(definition)) throw new CatalogRecordError(key, 'definition is not a JSON object');
  return { id: key, version: version as number, updatedAt, updatedBy, definition };
}

/**
 * Reads a record of the catalog topic: its secrets decrypted (each bound to its destination and
 * field), its definition validated by the config's rules (sources are checked when it is merged
 * with the file in force). Throws `CatalogRecordError` naming the key and the field.
 */
export function parseRecord(record: RawCatalogRecord, keyring: Keyring): ParsedRecord {
  if (record.key === null) throw new CatalogRecordError('(none)', 'a record without a key');
  const key = text(record.key);
  if (record.value === null) return { kind: 'tombstone', id: key };
  const entry = envelope(key, text(record.value));
  const definition = mapSecrets(entry.definition, (field, value) => {
    if (!isObject(value) || typeof value.encrypted !== 'string' || Object.keys(value).length !== 1)
      throw new CatalogRecordError(key, `definition.${field}: a secret must be stored encrypted`);
    try {
      return keyring.decrypt(value.encrypted, secretContext(key, field));
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
  if (definition.id !== key) throw new CatalogRecordError(key, 'definition.id differs from the record key');
  return { kind: 'entry', entry: { ...entry, definition } };
}

/** Folds a record into the catalog it was read into (later records of a key replace earlier ones). */
export function applyRecord(catalog: Map<string, CatalogEntry>, parsed: ParsedRecord): void {
  if (parsed.kind === 'tombstone') catalog.delete(parsed.id);
  else catalog.set(parsed.entry.id, parsed.entry);
}
