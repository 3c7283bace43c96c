import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type TokenEntry, tokenDigest } from '@sluice/destination-catalog';
import type { Principal } from '../../domain/access-policy.ts';

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

/** What a request's token is checked against: the config's admin token, the tenant tokens in force, the time. */
export interface Credentials {
  adminToken: string;
  tokens: () => Iterable<TokenEntry>;
  now: () => number;
}

/** Who a request is, or why it is nobody: no token, a token no one holds, or one past its expiry. */
export type Authentication =
  | { ok: true; principal: Principal }
  | { ok: false; reason: 'missing' | 'invalid' | 'expired' };

/**
 * Who the bearer token of a request is (docs/reference/tokens.md): the admin for the config's
 * token; a tenant token found by its SHA-256 among those in force (digests compared in constant time,
 * and only digests are held), refused once past its `expiresAt`.
 */
export function authenticate(credentials: Credentials, req: IncomingMessage): Authentication {
  const header = req.headers.authorization;
  const given = bearerOf(header);
  if (given === undefined) return { ok: false, reason: 'missing' };
  if (bearerMatches(header, credentials.adminToken)) return { ok: true, principal: { role: 'admin', name: 'admin' } };
  const hash = Buffer.from(tokenDigest(given), 'hex');
  for (const { definition } of credentials.tokens()) {
    if (!timingSafeEqual(hash, Buffer.from(definition.hash, 'hex'))) continue;
    if (definition.expiresAt !== undefined && Date.parse(definition.expiresAt) <= credentials.now())
      return { ok: false, reason: 'expired' };
    const { name, role, tenant } = definition;
    return { ok: true, principal: { role, name, tenant } };
  }
  return { ok: false, reason: 'invalid' };
}
