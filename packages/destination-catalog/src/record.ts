import { ConfigError, DEFAULT_TENANT, validateDestination } from '@sluice/config';
import { type Keyring, KeyringError } from '@sluice/secret-keyring';
import { MAX_RECORD_BYTES } from './constants.ts';
import {
  type CatalogRecord,
  type DeletionMark,
  deletionValue,
  type Envelope,
  envelopeValue,
  readEnvelope,
} from './envelope.ts';
import { CatalogRecordError } from './errors.ts';
import { type RecordKind, recordKey, subjectOfKey } from './record-key.ts';
import { isObject, type JsonObject, mapSecrets } from './secret-fields.ts';
import { readSourceDefinition, type SourceEntry } from './source-record.ts';
import { readTokenDefinition, type TokenEntry } from './token-record.ts';

/** One destination of the catalog, as held in memory: its secrets in clear. */
export interface CatalogEntry extends Envelope {
  /**
   * The definition as it was given: the shape of one entry of the config file's `destinations`
   * (defaults not filled in, so a default changed later applies to it as to the file's).
   */
  definition: JsonObject;
}

/** The tenant a destination's definition names (docs/reference/tenants.md): `default` when it names none. */
export const tenantOfDefinition = (definition: JsonObject): string =>
  typeof definition.tenant === 'string' ? definition.tenant : DEFAULT_TENANT;

/** A record as a consumer hands it over. */
export interface RawCatalogRecord {
  key: Buffer | string | null;
  value: Buffer | string | null;
}

/**
 * What a record says, with its key: a destination (`entry`) or a source as it now is, that one was
 * deleted (at a version; its key tells which kind), or that the record of the key is cleared.
 */
export type ParsedRecord =
  | { kind: 'entry'; key: string; entry: CatalogEntry }
  | { kind: 'source'; key: string; entry: SourceEntry }
  | { kind: 'token'; key: string; entry: TokenEntry }
  | { kind: 'deleted'; key: string; mark: DeletionMark }
  | { kind: 'cleared'; key: string; id: string };

/** A secret in a record: its ciphertext, never the secret. */
interface EncryptedSecret {
  encrypted: string;
}

/** What a secret's ciphertext is bound to: its destination and its field, so it cannot be moved to another. */
const secretContext = (id: string, field: string) => `destination:${id}:${field}`;

/**
 * The record of a destination: the value is JSON `{ format, id, version, updatedAt, updatedBy,
 * definition }`, every secret of the definition replaced by `{ "encrypted": "v1.<keyId>.…" }` under
 * the keyring's newest key (docs/reference/runtime-destinations.md, "Record").
 */
export function serializeEntry(entry: CatalogEntry, keyring: Keyring): CatalogRecord {
  const definition = mapSecrets(entry.definition, (field, value): EncryptedSecret => {
    if (typeof value !== 'string') throw new CatalogRecordError(entry.id, `${field}: only a literal secret is stored`);
    return { encrypted: keyring.encrypt(value, secretContext(entry.id, field)) };
  });
  return { key: recordKey({ kind: 'destination', id: entry.id }), value: envelopeValue(entry, definition) };
}

/**
 * The record of a deletion of a destination, a source or a token: `{ format, id, version, deleted:
 * true, tenant?, updatedAt, updatedBy }`, with the tenant of the destination or source it deleted.
 * Not a null value: a deletion carries its version like any change, and stays as the id's record in
 * force, so a change based on what it deleted is refused like any stale change.
 */
export function deletionRecord(mark: DeletionMark, kind: RecordKind): CatalogRecord {
  return { key: recordKey({ kind, id: mark.id }), value: deletionValue(mark) };
}

/** The record that clears one record no longer in force (its key, a null value), for compaction to remove both. */
export function clearingRecord(key: string): CatalogRecord {
  return { key, value: null };
}

const text = (v: Buffer | string) => (typeof v === 'string' ? v : v.toString('utf8'));

/** A destination's stored definition: each secret decrypted (bound to its destination and field), validated by the config's rules. */
function readDestinationDefinition(key: string, id: string, stored: JsonObject, keyring: Keyring): JsonObject {
  const definition = mapSecrets(stored, (field, value) => {
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
  return definition;
}

/**
 * Reads a record of the catalog topic: its key (`<id>@<nonce>` for a destination,
 * `source:<id>@<nonce>` for a source), its size, its envelope, then its definition by its kind: a
 * destination's secrets decrypted and validated by the config's rules (its sources are checked when
 * it is merged with the file in force), a source's id, name and key digests checked. A value over
 * `MAX_RECORD_BYTES` is refused unread, so what one record holds in memory stays bounded. Throws
 * `CatalogRecordError` naming the key and the field, never a secret.
 */
export function parseRecord(record: RawCatalogRecord, keyring: Keyring): ParsedRecord {
  if (record.key === null) throw new CatalogRecordError('(none)', 'a record without a key');
  const key = text(record.key);
  const subject = subjectOfKey(key);
  if (subject === undefined)
    throw new CatalogRecordError(key, 'the key is not <id>@<nonce>, source:<id>@<nonce> or token:<id>@<nonce>');
  const { id } = subject;
  if (record.value === null) return { kind: 'cleared', key, id };
  const bytes = typeof record.value === 'string' ? Buffer.byteLength(record.value) : record.value.length;
  if (bytes > MAX_RECORD_BYTES)
    throw new CatalogRecordError(key, `value of ${bytes} bytes passes the limit of ${MAX_RECORD_BYTES}`);
  const read = readEnvelope({ key, id, value: text(record.value) });
  if (read.deleted) {
    const { deleted: _, ...mark } = read;
    return { kind: 'deleted', key, mark };
  }
  const { definition: stored, ...mark } = read;
  if (subject.kind === 'source')
    return { kind: 'source', key, entry: { ...mark, definition: ownId(key, readSourceDefinition(key, stored)) } };
  if (subject.kind === 'token')
    return { kind: 'token', key, entry: { ...mark, definition: ownId(key, readTokenDefinition(key, stored)) } };
  return {
    kind: 'entry',
    key,
    entry: { ...mark, definition: ownId(key, readDestinationDefinition(key, id, stored, keyring)) },
  };
}

/** A definition read from a record, once its id is the key's. */
function ownId<D extends { id?: unknown }>(key: string, definition: D): D {
  if (definition.id !== subjectOfKey(key)!.id)
    throw new CatalogRecordError(key, 'definition.id differs from the record key');
  return definition;
}
