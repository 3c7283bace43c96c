import { ConfigError, type SigningScheme, validateDestination } from '@sluice/config';
import type { Catalog, CatalogContext, ChangeBy, Deleted, Refusal, VersionedRequest } from './change-basics.ts';
import {
  authorRefused,
  deletion,
  idRefused,
  inForce,
  isRefusal,
  sourceIdsInForce,
  stamp,
  tooLarge,
} from './change-basics.ts';
import { DEFAULT_ROTATION_OVERLAP_MS } from './constants.ts';
import type { FileConfig } from './file-config.ts';
import type { CatalogRecord, PastDeletion } from './envelope.ts';
import { type CatalogEntry, serializeEntry, tenantOfDefinition } from './record.ts';
import { isObject, type JsonObject } from './secret-fields.ts';
import { fillSigningSecrets, type GeneratedSecret, rotateSigningSecret, schemesOf } from './signing-secrets.ts';

export interface CreateRequest extends ChangeBy {
  /** One entry of the file's `destinations` shape; signing secrets it leaves out are generated. */
  definition: unknown;
  /**
   * The id's last deletion, if its record in force is one: the new destination goes on from its
   * version, so a version of an id never stands for two definitions (from 0 when none), and only
   * in the tenant it deleted from (`idRefused`).
   */
  deleted?: PastDeletion;
}

export interface ReplaceRequest extends VersionedRequest {
  /** The whole new definition; signing secrets it leaves out are kept from the current one. */
  definition: unknown;
}

export interface PatchRequest extends VersionedRequest {
  /** A JSON Merge Patch (RFC 7386) of the definition: objects merge, `null` removes, arrays replace. */
  patch: unknown;
}

export interface RotateRequest extends VersionedRequest {
  scheme: SigningScheme;
  /** How long the old secrets keep signing; default `DEFAULT_ROTATION_OVERLAP_MS` (24 h). */
  overlapMs?: number;
}

/** A change made: the entry as it now is, the record to write, and the secrets generated (shown this once). */
export interface Written {
  kind: 'created' | 'updated' | 'rotated';
  entry: CatalogEntry;
  record: CatalogRecord;
  secrets: GeneratedSecret[];
}

export type CatalogOutcome = Written | Deleted | Refusal;

const fileDeclared = (id: string, file: FileConfig): Refusal | undefined =>
  file.config.destinations.some((d) => d.id === id) ? { kind: 'file_declared', id, file: file.path } : undefined;

/** The destination a versioned change applies to, or why there is none to apply it to. */
const current = (catalog: Catalog, request: VersionedRequest, file: FileConfig): CatalogEntry | Refusal =>
  inForce(catalog.destinations, request, fileDeclared(request.id, file));

/** What `written` turns into an entry and its record. */
interface Draft {
  kind: Written['kind'];
  id: string;
  definition: JsonObject;
  /** The version the change is made on: the current entry's, or the deletion's a create goes on from. */
  previousVersion: number;
  secrets: GeneratedSecret[];
}

/**
 * Validates a draft by the config's rules — against the sources in force (the file's and the
 * runtime ones) and every other destination's id, file and runtime — and builds its entry and
 * record, held to `MAX_RECORD_BYTES`.
 */
function written(draft: Draft, change: ChangeBy & { catalog: Catalog }, context: CatalogContext): CatalogOutcome {
  const author = authorRefused(change.by);
  if (author) return author;
  const others = [...context.file.config.destinations.map((d) => d.id), ...change.catalog.destinations.keys()];
  try {
    validateDestination(draft.definition, {
      sourceIds: sourceIdsInForce(context.file, change.catalog),
      destinationIds: others.filter((id) => id !== draft.id),
    });
  } catch (err) {
    if (err instanceof ConfigError) return { kind: 'invalid', field: err.field, problem: err.problem };
    throw err;
  }
  const entry: CatalogEntry = { ...stamp(draft.id, draft.previousVersion, change), definition: draft.definition };
  const record = serializeEntry(entry, context.keyring);
  return tooLarge(draft.id, record) ?? { kind: draft.kind, entry, record, secrets: draft.secrets };
}

/**
 * Adds a destination under an id neither the file nor the catalog has. Signing secrets it leaves
 * out, for each of its schemes, are generated and returned in the outcome, once.
 */
export function createDestination(catalog: Catalog, request: CreateRequest, context: CatalogContext): CatalogOutcome {
  const definition = isObject(request.definition) ? structuredClone(request.definition) : undefined;
  const id = typeof definition?.id === 'string' ? definition.id : undefined;
  if (definition === undefined || id === undefined) {
    try {
      validateDestination(request.definition);
    } catch (err) {
      if (err instanceof ConfigError) return { kind: 'invalid', field: err.field, problem: err.problem };
      throw err;
    }
    return { kind: 'invalid', field: 'id', problem: 'is required' };
  }
  const declared = fileDeclared(id, context.file);
  if (declared) return declared;
  const taken = catalog.destinations.get(id);
  const refused = idRefused({
    id,
    tenant: tenantOfDefinition(definition),
    ...(taken && { held: { version: taken.version, tenant: tenantOfDefinition(taken.definition) } }),
    ...(request.deleted && { deleted: request.deleted }),
  });
  if (refused) return refused;
  const secrets = fillSigningSecrets(definition, undefined);
  const previousVersion = request.deleted?.version ?? 0;
  return written({ kind: 'created', id, definition, previousVersion, secrets }, { ...request, catalog }, context);
}

/** Checks that a new definition (or patch) keeps the destination's id. */
function sameId(value: unknown, id: string): Refusal | undefined {
  if (!isObject(value)) return { kind: 'invalid', field: '(root)', problem: 'must be object' };
  if (value.id !== undefined && value.id !== id)
    return { kind: 'invalid', field: 'id', problem: `must be ${JSON.stringify(id)}, the destination changed` };
  return undefined;
}

/**
 * A replace or a patch: `next` makes the new definition of the current one (`body`, the request's
 * definition or patch, must keep the id); signing secrets it leaves out are kept from the current one.
 */
function updated(
  catalog: Catalog,
  request: VersionedRequest & { body: unknown; next: (current: JsonObject) => JsonObject },
  context: CatalogContext,
): CatalogOutcome {
  const entry = current(catalog, request, context.file);
  if (isRefusal(entry)) return entry;
  const refused = sameId(request.body, request.id);
  if (refused) return refused;
  const definition = request.next(entry.definition);
  const secrets = fillSigningSecrets(definition, entry.definition);
  return written(
    { kind: 'updated', id: request.id, definition, previousVersion: entry.version, secrets },
    { ...request, catalog },
    context,
  );
}

/** Replaces a destination's definition, if it is still at the expected version. */
export function replaceDestination(catalog: Catalog, request: ReplaceRequest, context: CatalogContext): CatalogOutcome {
  const next = () => ({ ...structuredClone(request.definition as JsonObject), id: request.id });
  return updated(catalog, { ...request, body: request.definition, next }, context);
}

/** RFC 7386: `patch` merged into `target`; `null` removes a member, anything but an object replaces. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: JsonObject = isObject(target) ? structuredClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

/** Changes part of a destination's definition (a JSON Merge Patch), if it is still at the expected version. */
export function patchDestination(catalog: Catalog, request: PatchRequest, context: CatalogContext): CatalogOutcome {
  const next = (definition: JsonObject) => mergePatch(definition, request.patch) as JsonObject;
  return updated(catalog, { ...request, body: request.patch, next }, context);
}

/** Deletes a destination (a deletion record, one version on), if it is still at the expected version. */
export function deleteDestination(
  catalog: Catalog,
  request: VersionedRequest,
  context: CatalogContext,
): CatalogOutcome {
  const entry = current(catalog, request, context.file);
  return isRefusal(entry)
    ? entry
    : deletion(entry, request, { kind: 'destination', tenant: tenantOfDefinition(entry.definition) });
}

/**
 * Gives one signing scheme of a destination a new secret, returned once; the old ones keep signing
 * for the overlap (`rotateSigningSecret`). Refused for a scheme the destination does not sign with.
 */
export function rotateSecret(catalog: Catalog, request: RotateRequest, context: CatalogContext): CatalogOutcome {
  const entry = current(catalog, request, context.file);
  if (isRefusal(entry)) return entry;
  const overlapMs = request.overlapMs ?? DEFAULT_ROTATION_OVERLAP_MS;
  if (!Number.isSafeInteger(overlapMs) || overlapMs < 0)
    return { kind: 'invalid', field: 'overlapMs', problem: 'must be a whole number of milliseconds ≥ 0' };
  if (!schemesOf(entry.definition).includes(request.scheme))
    return {
      kind: 'invalid',
      field: 'settings.signing.schemes',
      problem: `does not include ${request.scheme}: no secret of it to rotate`,
    };
  const definition = structuredClone(entry.definition);
  const secret = rotateSigningSecret(definition, { scheme: request.scheme, at: request.at, overlapMs });
  return written(
    { kind: 'rotated', id: request.id, definition, previousVersion: entry.version, secrets: [secret] },
    { ...request, catalog },
    context,
  );
}
