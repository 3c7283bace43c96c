import type { Keyring } from '@sluice/secret-keyring';
import { MAX_RECORD_BYTES, MAX_UPDATED_BY_CHARS } from './constants.ts';
import type { Envelope, PastDeletion } from './envelope.ts';
import type { FileConfig } from './file-config.ts';
import type { CatalogRecord } from './envelope.ts';
import { type CatalogEntry, deletionRecord } from './record.ts';
import type { RecordKind } from './record-key.ts';
import type { SourceEntry } from './source-record.ts';
import type { TokenEntry } from './token-record.ts';

/**
 * The catalog as read from its topic: the runtime destinations, the runtime sources and the tenant
 * tokens of the delivery log's API in force, each by id.
 */
export interface Catalog {
  destinations: ReadonlyMap<string, CatalogEntry>;
  sources: ReadonlyMap<string, SourceEntry>;
  tokens: ReadonlyMap<string, TokenEntry>;
}

/** A catalog with nothing in it. */
export const emptyCatalog = (): Catalog => ({ destinations: new Map(), sources: new Map(), tokens: new Map() });

/** What every change is checked and written with. */
export interface CatalogContext {
  /** The config file in force: its ids are refused, its sources are ones a destination may name. */
  file: FileConfig;
  /** Encrypts the secrets of a destination's record written. */
  keyring: Keyring;
}

/** Who makes a change, and when (ms since the epoch; the caller's clock, so tests choose it). */
export interface ChangeBy {
  by: string;
  at: number;
}

/** A change to an existing destination or source, made only if it is still at `expectedVersion`. */
export interface VersionedRequest extends ChangeBy {
  id: string;
  expectedVersion: number;
}

/** A change refused; `OUTCOME_STATUS` gives the HTTP status of each kind. */
export type Refusal =
  | { kind: 'invalid'; field: string; problem: string }
  | { kind: 'not_found'; id: string }
  | { kind: 'id_taken'; id: string; version: number }
  /** Another tenant's id: in force, or deleted there (an id is never handed from one tenant to another). */
  | { kind: 'id_reserved'; id: string }
  | { kind: 'file_declared'; id: string; file: string }
  | { kind: 'version_conflict'; id: string; expectedVersion: number; currentVersion: number }
  | { kind: 'too_large'; id: string; bytes: number; limit: number }
  /** A source that destinations still name (their ids), refused deletion. */
  | { kind: 'source_in_use'; id: string; destinationIds: string[] }
  /** No write key of the source has the id. */
  | { kind: 'key_not_found'; id: string; keyId: string }
  /** The write key was revoked already (when). */
  | { kind: 'already_revoked'; id: string; keyId: string; revokedAt: string };

/** A deletion made: the destination's or source's id, the deletion's version (one more), its record. */
export interface Deleted {
  kind: 'deleted';
  id: string;
  version: number;
  record: CatalogRecord;
}

/** Tells a refusal from an entry (entries have no `kind`). */
export const isRefusal = <E extends object>(v: E | Refusal): v is Refusal => 'kind' in v;

/** Who makes a change is written in its record: 1–`MAX_UPDATED_BY_CHARS` characters. */
export const authorRefused = (by: string): Refusal | undefined =>
  by === '' || by.length > MAX_UPDATED_BY_CHARS
    ? { kind: 'invalid', field: 'updatedBy', problem: `must be 1–${MAX_UPDATED_BY_CHARS} characters` }
    : undefined;

/**
 * The entry a versioned change applies to, or why there is none to apply it to: the file declares
 * the id (`declared`), no entry has it, or it is no longer at the version the change expects.
 */
export function inForce<E extends Envelope>(
  entries: ReadonlyMap<string, E>,
  request: VersionedRequest,
  declared: Refusal | undefined,
): E | Refusal {
  if (declared) return declared;
  const entry = entries.get(request.id);
  if (entry === undefined) return { kind: 'not_found', id: request.id };
  if (entry.version !== request.expectedVersion)
    return {
      kind: 'version_conflict',
      id: request.id,
      expectedVersion: request.expectedVersion,
      currentVersion: entry.version,
    };
  return entry;
}

/** The envelope of what a change writes: one version past the one it was made on, when and by whom. */
export const stamp = (id: string, previousVersion: number, change: ChangeBy): Envelope => ({
  id,
  version: previousVersion + 1,
  updatedAt: new Date(change.at).toISOString(),
  updatedBy: change.by,
});

/** A record over `MAX_RECORD_BYTES`, refused. */
export function tooLarge(id: string, record: CatalogRecord): Refusal | undefined {
  const bytes = Buffer.byteLength(record.value ?? '');
  return bytes > MAX_RECORD_BYTES ? { kind: 'too_large', id, bytes, limit: MAX_RECORD_BYTES } : undefined;
}

/** What a deletion record is of: its kind, and the tenant of the destination or source it deletes. */
export interface DeletionOf {
  kind: RecordKind;
  tenant?: string;
}

/** The deletion of an entry in force (a record one version on, naming its tenant), by the request's author. */
export function deletion(entry: Envelope, request: VersionedRequest, of: DeletionOf): Deleted | Refusal {
  const author = authorRefused(request.by);
  if (author) return author;
  const mark = { ...stamp(entry.id, entry.version, request), ...(of.tenant !== undefined && { tenant: of.tenant }) };
  return { kind: 'deleted', id: entry.id, version: mark.version, record: deletionRecord(mark, of.kind) };
}

/** A create's claim on an id: the tenant it creates in, the one in force under the id, and its last deletion. */
export interface IdClaim {
  id: string;
  tenant: string;
  held?: { version: number; tenant: string };
  deleted?: PastDeletion;
}

/**
 * The one rule of who may create under an id (docs/reference/tenants.md, "Ids"): nobody while it
 * is in force (`id_taken` in the same tenant, `id_reserved` in another, which tells nothing of it),
 * and once deleted only its own tenant. An id's dead letters, parked and waiting events, state, log
 * rows and audit stay keyed by it, so handing it to another tenant would hand them over too.
 */
export function idRefused(claim: IdClaim): Refusal | undefined {
  const { id, tenant, held, deleted } = claim;
  if (held !== undefined)
    return held.tenant === tenant ? { kind: 'id_taken', id, version: held.version } : { kind: 'id_reserved', id };
  return deleted?.tenant !== undefined && deleted.tenant !== tenant ? { kind: 'id_reserved', id } : undefined;
}

/**
 * The sources a destination may name, the file's and the runtime ones in force: each id with its
 * tenant, since a destination names only sources of its own tenant.
 */
export function sourceIdsInForce(file: FileConfig, catalog: Catalog): Map<string, string> {
  const tenants = new Map(file.config.sources.map((s) => [s.id, s.tenant]));
  for (const [id, entry] of catalog.sources) if (!tenants.has(id)) tenants.set(id, entry.definition.tenant);
  return tenants;
}
