import { MAX_UPDATED_BY_CHARS, NAME_PATTERN, NAME_RULE, RECORD_FORMAT } from './constants.ts';
import { CatalogRecordError } from './errors.ts';
import { isObject, type JsonObject } from './secret-fields.ts';

/**
 * A record of the catalog topic. Its key is `<name>@<nonce>`, new for every record written, so
 * that compaction never lets a change that lost a race replace the one that won (docs/reference/
 * runtime-destinations.md, "Compaction"); a null value clears a record no longer in force.
 */
export interface CatalogRecord {
  key: string;
  value: string | null;
}

/** What every record of the catalog says besides its definition: whose, which version, when and by whom. */
export interface Envelope {
  /** The destination's or source's id: its records' keys name it. */
  id: string;
  /**
   * 1 when created, one more at each change, the deletion included (one created again under the
   * id goes on from its deletion's version): what a change's expected version is compared with.
   */
  version: number;
  /** When it last changed, RFC 3339 in UTC. */
  updatedAt: string;
  /** Who changed it last, as the caller names them. */
  updatedBy: string;
}

/** A record's value: JSON `{ format, id, version, updatedAt, updatedBy, definition }`. */
export function envelopeValue(envelope: Envelope, definition: JsonObject): string {
  const { id, version, updatedAt, updatedBy } = envelope;
  return JSON.stringify({ format: RECORD_FORMAT, id, version, updatedAt, updatedBy, definition });
}

/**
 * What a deletion keeps of what it deleted: the tenant it belonged to (a destination's or a
 * source's; none for a token), so that its id is not created again in another tenant.
 */
export interface DeletionMark extends Envelope {
  tenant?: string;
}

/**
 * An id's last deletion, when the catalog's record in force for it is one: its version (a create
 * goes on from it) and the tenant of what it deleted (none for a deletion record without one).
 */
export interface PastDeletion {
  version: number;
  tenant?: string;
}

/** A deletion's value: `{ format, id, version, deleted: true, tenant?, updatedAt, updatedBy }`, no definition. */
export function deletionValue(mark: DeletionMark): string {
  const { id, version, tenant, updatedAt, updatedBy } = mark;
  return JSON.stringify({
    format: RECORD_FORMAT,
    id,
    version,
    deleted: true,
    ...(tenant !== undefined && { tenant }),
    updatedAt,
    updatedBy,
  });
}

/**
 * The envelope of a record's value, checked field by field, with its definition (an entry) or
 * `deleted` (a deletion, with the tenant of what it deleted when it names one): the one check of
 * every kind of record. `id` is the id its key names.
 */
export function readEnvelope(record: {
  key: string;
  id: string;
  value: string;
}): Envelope & ({ deleted: true; tenant?: string } | { deleted?: undefined; definition: JsonObject }) {
  const { key } = record;
  let parsed: unknown;
  try {
    parsed = JSON.parse(record.value);
  } catch {
    throw new CatalogRecordError(key, 'value is not JSON');
  }
  if (!isObject(parsed)) throw new CatalogRecordError(key, 'value is not a JSON object');
  const { format, id, version, updatedAt, updatedBy, definition, deleted, tenant } = parsed;
  if (format !== RECORD_FORMAT)
    throw new CatalogRecordError(key, `format ${JSON.stringify(format)}, expected ${RECORD_FORMAT}`);
  if (typeof id !== 'string' || id !== record.id) throw new CatalogRecordError(key, 'id differs from the record key');
  if (!Number.isSafeInteger(version) || (version as number) < 1)
    throw new CatalogRecordError(key, 'version must be an integer ≥ 1');
  if (!isTime(updatedAt)) throw new CatalogRecordError(key, 'updatedAt must be an RFC 3339 time');
  if (typeof updatedBy !== 'string' || updatedBy === '' || updatedBy.length > MAX_UPDATED_BY_CHARS)
    throw new CatalogRecordError(key, `updatedBy must be 1–${MAX_UPDATED_BY_CHARS} characters`);
  const envelope = { id, version: version as number, updatedAt, updatedBy };
  if (deleted === true) {
    if (definition !== undefined) throw new CatalogRecordError(key, 'a deletion has no definition');
    if (tenant === undefined) return { ...envelope, deleted };
    if (typeof tenant !== 'string' || !NAME_PATTERN.test(tenant))
      throw new CatalogRecordError(key, `tenant must be ${NAME_RULE}`);
    return { ...envelope, deleted, tenant };
  }
  if (deleted !== undefined) throw new CatalogRecordError(key, 'deleted must be true when present');
  if (tenant !== undefined) throw new CatalogRecordError(key, 'only a deletion has a tenant beside its definition');
  if (!isObject(definition)) throw new CatalogRecordError(key, 'definition is not a JSON object');
  return { ...envelope, definition };
}

/** An RFC 3339 time as records hold them (`Date.parse` takes it). */
export const isTime = (v: unknown): v is string => typeof v === 'string' && !Number.isNaN(Date.parse(v));
