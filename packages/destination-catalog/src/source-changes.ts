import { ConfigError, type SourceFields, validateSource } from '@sluice/config';
import { generateWriteKey, generateWriteKeyId, writeKeyDigest } from '@sluice/secret-keyring';
import type { Catalog, CatalogContext, ChangeBy, Deleted, Refusal, VersionedRequest } from './change-basics.ts';
import { authorRefused, deletion, idRefused, inForce, isRefusal, stamp, tooLarge } from './change-basics.ts';
import { MAX_ACTIVE_WRITE_KEYS, MAX_REVOKED_WRITE_KEYS } from './constants.ts';
import type { FileConfig } from './file-config.ts';
import type { CatalogRecord, PastDeletion } from './envelope.ts';
import {
  keysInForce,
  type SourceDefinition,
  type SourceEntry,
  type StoredWriteKey,
  serializeSource,
} from './source-record.ts';

/** A write key just minted: its id, the key itself (shown this once, never stored) and when. */
export interface MintedWriteKey {
  id: string;
  key: string;
  createdAt: string;
}

export interface CreateSourceRequest extends ChangeBy {
  /** `{ id, name? }`, by the file's rules for `sources`; its first write key is minted. */
  source: unknown;
  /** The id's last deletion, if its record in force is one (as `CreateRequest.deleted`). */
  deleted?: PastDeletion;
}

export interface RenameSourceRequest extends VersionedRequest {
  name: unknown;
}

export interface RevokeWriteKeyRequest extends VersionedRequest {
  /** The public id of the key (`wk_…`). */
  keyId: string;
}

/** A change of a source made: the source as it now is, the record to write, and the key minted (shown once). */
export interface SourceWritten {
  kind: 'created' | 'updated' | 'key_minted' | 'key_revoked';
  entry: SourceEntry;
  record: CatalogRecord;
  /** The key minted by a create or a mint; absent for the other changes. */
  writeKey?: MintedWriteKey;
}

export type SourceOutcome = SourceWritten | Deleted | Refusal;

const fileDeclared = (id: string, file: FileConfig): Refusal | undefined =>
  file.config.sources.some((s) => s.id === id) ? { kind: 'file_declared', id, file: file.path } : undefined;

/** The source a versioned change applies to, or why there is none to apply it to. */
const current = (catalog: Catalog, request: VersionedRequest, context: CatalogContext): SourceEntry | Refusal =>
  inForce(catalog.sources, request, fileDeclared(request.id, context.file));

/** A new write key: the key in clear for the answer, its digest for the record. */
function mint(at: number): { minted: MintedWriteKey; stored: StoredWriteKey } {
  const key = generateWriteKey();
  const minted = { id: generateWriteKeyId(), key, createdAt: new Date(at).toISOString() };
  return { minted, stored: { id: minted.id, hash: writeKeyDigest(key), createdAt: minted.createdAt } };
}

/** Builds the entry and record of a source's new definition, held to `MAX_RECORD_BYTES`. */
function written(
  draft: {
    kind: SourceWritten['kind'];
    definition: SourceDefinition;
    previousVersion: number;
    writeKey?: MintedWriteKey;
  },
  change: ChangeBy,
): SourceOutcome {
  const author = authorRefused(change.by);
  if (author) return author;
  const entry: SourceEntry = {
    ...stamp(draft.definition.id, draft.previousVersion, change),
    definition: draft.definition,
  };
  const record = serializeSource(entry);
  return (
    tooLarge(entry.id, record) ?? {
      kind: draft.kind,
      entry,
      record,
      ...(draft.writeKey !== undefined && { writeKey: draft.writeKey }),
    }
  );
}

/** A source's id and name by the file's rules, or the refusal naming the field. */
function fields(input: unknown): SourceFields | Refusal {
  try {
    return validateSource(input);
  } catch (err) {
    if (err instanceof ConfigError) return { kind: 'invalid', field: err.field, problem: err.problem };
    throw err;
  }
}

/**
 * Adds a source under an id neither the file nor the catalog has, with its first write key, minted
 * here and returned in the outcome, once (the record keeps its digest).
 */
export function createSource(catalog: Catalog, request: CreateSourceRequest, context: CatalogContext): SourceOutcome {
  const checked = fields(request.source);
  if (isRefusal(checked)) return checked;
  const declared = fileDeclared(checked.id, context.file);
  if (declared) return declared;
  const taken = catalog.sources.get(checked.id);
  const refused = idRefused({
    id: checked.id,
    tenant: checked.tenant,
    ...(taken && { held: { version: taken.version, tenant: taken.definition.tenant } }),
    ...(request.deleted && { deleted: request.deleted }),
  });
  if (refused) return refused;
  const { minted, stored } = mint(request.at);
  const definition = { id: checked.id, name: checked.name, tenant: checked.tenant, writeKeys: [stored] };
  return written(
    { kind: 'created', definition, previousVersion: request.deleted?.version ?? 0, writeKey: minted },
    request,
  );
}

/** Gives a source a new name, if it is still at the expected version. */
export function renameSource(catalog: Catalog, request: RenameSourceRequest, context: CatalogContext): SourceOutcome {
  const entry = current(catalog, request, context);
  if (isRefusal(entry)) return entry;
  const checked = fields({ id: entry.id, name: request.name });
  if (isRefusal(checked)) return checked;
  const definition = { ...entry.definition, name: checked.name };
  return written({ kind: 'updated', definition, previousVersion: entry.version }, request);
}

/**
 * Deletes a source (a deletion record, one version on), if it is still at the expected version and
 * no destination names it: the file's and the runtime ones the catalog holds are checked here; a
 * runtime destination created meanwhile on another replica is left out of the merge instead
 * ("unknown source"), as one whose source the file removed.
 */
export function deleteSource(catalog: Catalog, request: VersionedRequest, context: CatalogContext): SourceOutcome {
  const entry = current(catalog, request, context);
  if (isRefusal(entry)) return entry;
  const naming = [
    ...context.file.config.destinations.filter((d) => d.sourceIds.includes(entry.id)).map((d) => d.id),
    ...[...catalog.destinations.values()]
      .filter((d) => Array.isArray(d.definition.sourceIds) && d.definition.sourceIds.includes(entry.id))
      .map((d) => d.id),
  ];
  if (naming.length > 0) return { kind: 'source_in_use', id: entry.id, destinationIds: naming };
  return deletion(entry, request, { kind: 'source', tenant: entry.definition.tenant });
}

/** Mints a new write key for a source, returned once; refused past `MAX_ACTIVE_WRITE_KEYS` keys in force. */
export function mintWriteKey(catalog: Catalog, request: VersionedRequest, context: CatalogContext): SourceOutcome {
  const entry = current(catalog, request, context);
  if (isRefusal(entry)) return entry;
  if (keysInForce(entry.definition).length >= MAX_ACTIVE_WRITE_KEYS)
    return {
      kind: 'invalid',
      field: 'writeKeys',
      problem: `at most ${MAX_ACTIVE_WRITE_KEYS} write keys in force: revoke one first`,
    };
  const { minted, stored } = mint(request.at);
  // Ids are random; one already in the source (one chance in 2^48 per key) is drawn again by a retry.
  if (entry.definition.writeKeys.some((k) => k.id === stored.id)) return mintWriteKey(catalog, request, context);
  const definition = { ...entry.definition, writeKeys: [...entry.definition.writeKeys, stored] };
  return written({ kind: 'key_minted', definition, previousVersion: entry.version, writeKey: minted }, request);
}

/**
 * Revokes a write key of a source by its id: ingest refuses it once it read the change. The source
 * keeps the last `MAX_REVOKED_WRITE_KEYS` revoked keys (ids and times) and drops older ones.
 */
export function revokeWriteKey(
  catalog: Catalog,
  request: RevokeWriteKeyRequest,
  context: CatalogContext,
): SourceOutcome {
  const entry = current(catalog, request, context);
  if (isRefusal(entry)) return entry;
  const key = entry.definition.writeKeys.find((k) => k.id === request.keyId);
  if (key === undefined) return { kind: 'key_not_found', id: entry.id, keyId: request.keyId };
  if (key.revokedAt !== undefined)
    return { kind: 'already_revoked', id: entry.id, keyId: key.id, revokedAt: key.revokedAt };
  const revokedAt = new Date(request.at).toISOString();
  const keys = entry.definition.writeKeys.map((k) => (k === key ? { ...k, revokedAt } : k));
  const revoked = keys.filter((k) => k.revokedAt !== undefined);
  // Ties of `revokedAt` keep the order minted: sort is stable.
  const dropped = new Set(
    revoked.sort((a, b) => Date.parse(a.revokedAt!) - Date.parse(b.revokedAt!)).slice(0, -MAX_REVOKED_WRITE_KEYS),
  );
  const definition = { ...entry.definition, writeKeys: keys.filter((k) => !dropped.has(k)) };
  return written({ kind: 'key_revoked', definition, previousVersion: entry.version }, request);
}
