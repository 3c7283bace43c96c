import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type TokenEntry, tokenDigest } from '@sluice/destination-catalog';
import { ADMIN_TOKEN_ID, type Principal } from '../../domain/access-policy.ts';
import { type PortalLinkContext, type PortalLinkRefusal, readPortalLink } from '../../domain/portal-link.ts';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** The bearer token of an `Authorization` header, or undefined for none (or one too long to be a token). */
function bearerOf(header: string | undefined): string | undefined {
  if (header === undefined || header.length > 4_096) return undefined;
  return /^Bearer (.+)$/i.exec(header)?.[1];
}

/**
 * True when the `Authorization` header is `Bearer <token>`. Compares digests in constant time, so
 * neither the token's content nor its length leaks through timing.
 */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const given = bearerOf(header);
  return timingSafeEqual(digest(given ?? ''), digest(token)) && given !== undefined;
}

/**
 * What a request's token is checked against: the config's admin token, the tenant tokens in force,
 * the time, and the runtime keyring portal links are verified with (undefined: runtime
 * destinations off, so no portal link is accepted).
 */
export interface Credentials {
  adminToken: string;
  /** The tenant tokens in force, by id (the catalog's own map). */
  tokens: () => ReadonlyMap<string, TokenEntry>;
  now: () => number;
  portal: PortalLinkContext | undefined;
}

/** Why a request is nobody: no token, a token no one holds, one past its expiry, or a portal link refused. */
export type FailureReason = 'missing' | 'invalid' | 'expired' | `portal_${PortalLinkRefusal}`;

/** Who a request is, or why it is nobody. */
export type Authentication = { ok: true; principal: Principal } | { ok: false; reason: FailureReason };

/** The prefix of a portal link (docs/reference/portal-links.md): such a bearer is read as one, never looked up as a token. */
const PORTAL_PREFIX = 'spl1.';

/** Whether a tenant token is past its `expiresAt` (one without never is). */
const expired = (token: TokenEntry, now: number) =>
  token.definition.expiresAt !== undefined && Date.parse(token.definition.expiresAt) <= now;

/** Whether the tenant token `id` is in force: in the catalog (not revoked) and not past its expiry. */
function tokenInForce(credentials: Credentials, id: string): boolean {
  const token = credentials.tokens().get(id);
  return token !== undefined && !expired(token, credentials.now());
}

/**
 * A portal link's principal (the `portal` role), or why it is refused; with no keyring no link is
 * valid, and a link minted by a tenant token dies with that token.
 */
function portalPrincipal(credentials: Credentials, token: string): Authentication {
  if (credentials.portal === undefined) return { ok: false, reason: 'portal_bad_signature' };
  const read = readPortalLink(credentials.portal, token);
  if (!read.ok) return { ok: false, reason: `portal_${read.refusal}` };
  const { tenant, destinationId, id, mintedBy, mintedByTokenId } = read.grant;
  if (mintedByTokenId !== undefined && !tokenInForce(credentials, mintedByTokenId))
    return { ok: false, reason: 'portal_minter_revoked' };
  const name = `portal:${id} by ${mintedBy}`;
  return {
    ok: true,
    principal: { role: 'portal', name, tokenId: id, tenant, ...(destinationId !== undefined && { destinationId }) },
  };
}

/**
 * Who the bearer token of a request is (docs/reference/tokens.md): the admin for the config's
 * token; a portal link (`spl1.…`) by its signature and expiry; a tenant token found by its SHA-256
 * among those in force (digests compared in constant time, and only digests are held), refused once
 * past its `expiresAt`.
 */
export function authenticate(credentials: Credentials, req: IncomingMessage): Authentication {
  const header = req.headers.authorization;
  const given = bearerOf(header);
  if (given === undefined) return { ok: false, reason: 'missing' };
  if (bearerMatches(header, credentials.adminToken))
    return { ok: true, principal: { role: 'admin', name: 'admin', tokenId: ADMIN_TOKEN_ID } };
  if (given.startsWith(PORTAL_PREFIX)) return portalPrincipal(credentials, given);
  const hash = Buffer.from(tokenDigest(given), 'hex');
  for (const token of credentials.tokens().values()) {
    if (!timingSafeEqual(hash, Buffer.from(token.definition.hash, 'hex'))) continue;
    if (expired(token, credentials.now())) return { ok: false, reason: 'expired' };
    const { id, name, role, tenant } = token.definition;
    return { ok: true, principal: { role, name, tokenId: id, tenant } };
  }
  return { ok: false, reason: 'invalid' };
}
