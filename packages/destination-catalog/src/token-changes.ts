import {
  authorRefused,
  type Catalog,
  type ChangeBy,
  type Deleted,
  deletion,
  isRefusal,
  type Refusal,
  stamp,
} from './change-basics.ts';
import { TOKEN_ROLES, type TokenRole } from '@sluice/log-api';
import { MAX_TOKENS, NAME_PATTERN, NAME_RULE } from './constants.ts';
import { isObject } from './secret-fields.ts';
import { generateToken, serializeToken, type TokenDefinition, type TokenEntry, tokenDigest } from './token-record.ts';
import type { CatalogRecord } from './envelope.ts';

export interface CreateTokenRequest extends ChangeBy {
  /** `{ name, tenant, role, expiresAt? }`, checked here. */
  token: unknown;
  /** The version the id's last token was deleted at (0 for a new id, the usual case). */
  deletedVersion?: number;
}

export interface RevokeTokenRequest extends ChangeBy {
  id: string;
}

/** A token created: its entry and record, and the token itself (shown this once, never stored). */
export interface TokenCreated {
  kind: 'created';
  entry: TokenEntry;
  record: CatalogRecord;
  token: string;
}

export type TokenOutcome = TokenCreated | Deleted | Refusal;

const invalid = (field: string, problem: string): Refusal => ({ kind: 'invalid', field, problem });

/** The fields of a token asked for, checked one by one, or the refusal naming the first wrong one. */
function fields(
  input: unknown,
  at: number,
): { name: string; tenant: string; role: TokenRole; expiresAt?: string } | Refusal {
  if (!isObject(input)) return invalid('(root)', 'must be a JSON object');
  const { name, tenant, role, expiresAt, ...rest } = input;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) return invalid(extra, 'is not a field of a token');
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) return invalid('name', `must be ${NAME_RULE}`);
  if (typeof tenant !== 'string' || !NAME_PATTERN.test(tenant)) return invalid('tenant', `must be ${NAME_RULE}`);
  if (!TOKEN_ROLES.includes(role as TokenRole)) return invalid('role', `must be one of ${TOKEN_ROLES.join(', ')}`);
  if (expiresAt === undefined) return { name, tenant, role: role as TokenRole };
  const expires = typeof expiresAt === 'string' ? Date.parse(expiresAt) : Number.NaN;
  if (Number.isNaN(expires)) return invalid('expiresAt', 'must be an RFC 3339 time');
  if (expires <= at) return invalid('expiresAt', 'must be in the future');
  return { name, tenant, role: role as TokenRole, expiresAt: new Date(expires).toISOString() };
}

/**
 * Creates a tenant token (docs/reference/tokens.md): a new random token, returned in the outcome
 * once; the record keeps its SHA-256. Its name is unique among the tokens in force, since what it
 * does is recorded by it; at most `MAX_TOKENS` are in force.
 */
export function createToken(catalog: Catalog, request: CreateTokenRequest): TokenOutcome {
  const checked = fields(request.token, request.at);
  if (isRefusal(checked)) return checked;
  const author = authorRefused(request.by);
  if (author) return author;
  if ([...catalog.tokens.values()].some((t) => t.definition.name === checked.name))
    return invalid('name', `a token named ${checked.name} is in force: revoke it or choose another name`);
  if (catalog.tokens.size >= MAX_TOKENS) return invalid('(root)', `at most ${MAX_TOKENS} tokens in force`);
  const { id, token } = generateToken();
  const createdAt = new Date(request.at).toISOString();
  const definition: TokenDefinition = { id, ...checked, hash: tokenDigest(token), createdAt };
  const entry: TokenEntry = { ...stamp(id, request.deletedVersion ?? 0, request), definition };
  return { kind: 'created', entry, record: serializeToken(entry), token };
}

/** Revokes a token: its record deleted (one version on), so every replica refuses it once read. */
export function revokeToken(catalog: Catalog, request: RevokeTokenRequest): TokenOutcome {
  const entry = catalog.tokens.get(request.id);
  if (entry === undefined) return { kind: 'not_found', id: request.id };
  return deletion(entry, { ...request, expectedVersion: entry.version }, { kind: 'token' });
}
