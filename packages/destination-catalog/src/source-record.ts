import { ConfigError, validateSource } from '@sluice/config';
import { MAX_ACTIVE_WRITE_KEYS, MAX_REVOKED_WRITE_KEYS } from './constants.ts';
import { type CatalogRecord, type Envelope, envelopeValue, isTime } from './envelope.ts';
import { CatalogRecordError } from './errors.ts';
import { recordKey } from './record-key.ts';
import { isObject, type JsonObject } from './secret-fields.ts';

/** A write key of a runtime source as its record keeps it: never the key, its digest. */
export interface StoredWriteKey {
  /** Its public id (`wk_` and 12 hex characters): lists and revocations name the key by it. */
  id: string;
  /** The SHA-256 of the key, 64 hex characters (`writeKeyDigest`); the key itself is shown once, when minted. */
  hash: string;
  /** When it was minted, RFC 3339 in UTC. */
  createdAt: string;
  /** When it was revoked: from then on ingest refuses it. Absent: in force. */
  revokedAt?: string;
}

/** A runtime source: the id, name and tenant the file's `sources` would give, and its write keys as digests. */
export interface SourceDefinition {
  id: string;
  name: string;
  /** The tenant it belongs to (docs/reference/tenants.md); a record written without one reads as `default`. */
  tenant: string;
  /** In the order minted: the keys in force and the last revoked ones (`MAX_REVOKED_WRITE_KEYS`). */
  writeKeys: StoredWriteKey[];
}

/** One runtime source of the catalog, as held in memory. */
export interface SourceEntry extends Envelope {
  definition: SourceDefinition;
}

/** The write keys of a source in force: those not revoked. */
export const keysInForce = (definition: SourceDefinition): StoredWriteKey[] =>
  definition.writeKeys.filter((k) => k.revokedAt === undefined);

/** The record of a source: key `source:<id>@<nonce>`, value the envelope with its definition. */
export function serializeSource(entry: SourceEntry): CatalogRecord {
  const { id, name, tenant, writeKeys } = entry.definition;
  const definition = { id, name, tenant, writeKeys };
  return { key: recordKey({ kind: 'source', id: entry.id }), value: envelopeValue(entry, definition) };
}

const KEY_ID = /^[A-Za-z0-9_-]{1,64}$/;
const DIGEST = /^[0-9a-f]{64}$/;

/** One stored write key, checked field by field; anything more (a key in clear) is refused. */
function readStoredKey(key: string, value: unknown, field: string): StoredWriteKey {
  if (!isObject(value)) throw new CatalogRecordError(key, `${field} is not a JSON object`);
  const { id, hash, createdAt, revokedAt, ...rest } = value;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) throw new CatalogRecordError(key, `${field}.${extra} is not a field of a stored write key`);
  if (typeof id !== 'string' || !KEY_ID.test(id))
    throw new CatalogRecordError(key, `${field}.id must be 1–64 of A-Z a-z 0-9 _ -`);
  if (typeof hash !== 'string' || !DIGEST.test(hash))
    throw new CatalogRecordError(key, `${field}.hash must be a SHA-256 digest as 64 lowercase hex characters`);
  if (!isTime(createdAt)) throw new CatalogRecordError(key, `${field}.createdAt must be an RFC 3339 time`);
  if (revokedAt !== undefined && !isTime(revokedAt))
    throw new CatalogRecordError(key, `${field}.revokedAt must be an RFC 3339 time`);
  return { id, hash, createdAt, ...(revokedAt !== undefined && { revokedAt }) };
}

/**
 * Reads the definition of a source record: its id and name by the file's rules (`validateSource`),
 * its write keys each an id, a digest and times, ids and digests distinct, within the limits
 * (`MAX_ACTIVE_WRITE_KEYS` in force, `MAX_REVOKED_WRITE_KEYS` revoked). Throws
 * `CatalogRecordError` naming the key and the field, never a digest.
 */
export function readSourceDefinition(key: string, stored: JsonObject): SourceDefinition {
  const { writeKeys, ...fields } = stored;
  let checked: { id: string; name: string; tenant: string };
  try {
    checked = validateSource(fields);
  } catch (err) {
    if (err instanceof ConfigError)
      throw new CatalogRecordError(key, `definition.${err.field}: ${err.problem}`, { cause: err });
    throw err;
  }
  if (!Array.isArray(writeKeys)) throw new CatalogRecordError(key, 'definition.writeKeys must be a list');
  const keys = writeKeys.map((k, i) => readStoredKey(key, k, `definition.writeKeys[${i}]`));
  if (new Set(keys.map((k) => k.id)).size !== keys.length || new Set(keys.map((k) => k.hash)).size !== keys.length)
    throw new CatalogRecordError(key, 'definition.writeKeys: two keys share an id or a digest');
  const active = keys.filter((k) => k.revokedAt === undefined).length;
  if (active > MAX_ACTIVE_WRITE_KEYS || keys.length - active > MAX_REVOKED_WRITE_KEYS)
    throw new CatalogRecordError(
      key,
      `definition.writeKeys: at most ${MAX_ACTIVE_WRITE_KEYS} in force and ${MAX_REVOKED_WRITE_KEYS} revoked`,
    );
  return { id: checked.id, name: checked.name, tenant: checked.tenant, writeKeys: keys };
}
