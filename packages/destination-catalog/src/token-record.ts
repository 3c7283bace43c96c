import { randomBytes } from 'node:crypto';
import { TOKEN_ROLES, type TokenRole } from '@sluice/log-api';
import { secretDigest } from '@sluice/secret-keyring';
import { NAME_PATTERN, NAME_RULE, TOKEN_BYTES, TOKEN_PREFIX } from './constants.ts';
import { type CatalogRecord, type Envelope, envelopeValue, isTime } from './envelope.ts';
import { CatalogRecordError } from './errors.ts';
import { recordKey } from './record-key.ts';
import type { JsonObject } from './secret-fields.ts';

/** A tenant token as its record keeps it: never the token, its digest. */
export interface TokenDefinition {
  /** Its public id (`tok_` and 16 hex characters): lists and revocations name it by it. */
  id: string;
  /** Unique among the tokens in force: what the actions and changes it makes are recorded `by`. */
  name: string;
  tenant: string;
  role: TokenRole;
  /** The SHA-256 of the token, 64 hex characters; the token itself is shown once, when created. */
  hash: string;
  createdAt: string;
  /** From then on the token is refused (401). Absent: it does not expire. */
  expiresAt?: string;
}

/** One token of the catalog, as held in memory. */
export interface TokenEntry extends Envelope {
  definition: TokenDefinition;
}

const TOKEN_ID = /^tok_[0-9a-f]{16}$/;
const DIGEST = /^[0-9a-f]{64}$/;

/** The SHA-256 of a token as 64 lowercase hex characters: what its record keeps, and what a request's token is looked up by. */
export const tokenDigest = (token: string): string => secretDigest(token);

/** A new token (`slt_` and its 32 random bytes as base64url) and its public id. */
export function generateToken(): { id: string; token: string } {
  return {
    id: `tok_${randomBytes(8).toString('hex')}`,
    token: `${TOKEN_PREFIX}${randomBytes(TOKEN_BYTES).toString('base64url')}`,
  };
}

/** The record of a token: key `token:<id>@<nonce>`, value the envelope with its definition. */
export function serializeToken(entry: TokenEntry): CatalogRecord {
  const { id, name, tenant, role, hash, createdAt, expiresAt } = entry.definition;
  const definition = { id, name, tenant, role, hash, createdAt, ...(expiresAt !== undefined && { expiresAt }) };
  return { key: recordKey({ kind: 'token', id: entry.id }), value: envelopeValue(entry, definition) };
}

/** Reads the definition of a token record, field by field; anything more (a token in clear) is refused. */
export function readTokenDefinition(key: string, stored: JsonObject): TokenDefinition {
  const { id, name, tenant, role, hash, createdAt, expiresAt, ...rest } = stored;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) throw new CatalogRecordError(key, `definition.${extra} is not a field of a token`);
  if (typeof id !== 'string' || !TOKEN_ID.test(id))
    throw new CatalogRecordError(key, 'definition.id must be tok_ and 16 hex characters');
  if (typeof name !== 'string' || !NAME_PATTERN.test(name))
    throw new CatalogRecordError(key, `definition.name must be ${NAME_RULE}`);
  if (typeof tenant !== 'string' || !NAME_PATTERN.test(tenant))
    throw new CatalogRecordError(key, `definition.tenant must be ${NAME_RULE}`);
  if (!TOKEN_ROLES.includes(role as TokenRole))
    throw new CatalogRecordError(key, `definition.role must be one of ${TOKEN_ROLES.join(', ')}`);
  if (typeof hash !== 'string' || !DIGEST.test(hash))
    throw new CatalogRecordError(key, 'definition.hash must be a SHA-256 digest as 64 lowercase hex characters');
  if (!isTime(createdAt)) throw new CatalogRecordError(key, 'definition.createdAt must be an RFC 3339 time');
  if (expiresAt !== undefined && !isTime(expiresAt))
    throw new CatalogRecordError(key, 'definition.expiresAt must be an RFC 3339 time');
  return {
    id,
    name,
    tenant,
    role: role as TokenRole,
    hash,
    createdAt,
    ...(expiresAt !== undefined && { expiresAt }),
  };
}
