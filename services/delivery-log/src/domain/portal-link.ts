import type { Keyring } from '@sluice/secret-keyring';

/**
 * Portal links (docs/reference/portal-links.md; the `portal` role of docs/reference/tokens.md): a
 * short-lived token, signed with the runtime keyring, for one tenant's view of the console
 * (optionally one destination of it). The
 * token is `spl1.<keyId>.<grant>.<mac>`: the grant as base64url JSON and an HMAC-SHA256 of
 * everything before it under the key's portal-link subkey (`Keyring.sign`). A link past its
 * expiry, with any byte changed, or signed by a key no longer in the ring is refused.
 */

/** The longest a portal link may live: 24 hours. */
export const PORTAL_LINK_MAX_MS = 24 * 60 * 60 * 1000;
/** How long a portal link lives when its minter names no lifetime: 1 hour. */
export const PORTAL_LINK_DEFAULT_MS = 60 * 60 * 1000;
/** The longest token read: a longer one is refused before anything is parsed. */
export const PORTAL_LINK_MAX_CHARS = 2_048;

const PREFIX = 'spl1';
const PURPOSE = 'portal-link';

/** What a link grants: a tenant's view, or one destination of it, until `expiresAt` (ms since the epoch). */
export interface PortalGrant {
  tenant: string;
  destinationId?: string;
  /** The name of the token that minted it (what an action taken through the link records as `by`, with the link's id). */
  mintedBy: string;
  /**
   * The id of the tenant token that minted it (absent for the admin, and in links minted before it
   * was kept): a link is refused once that token is revoked or expired.
   */
  mintedByTokenId?: string;
  /** The link's own id (random, 12 characters): names it in actions and logs. */
  id: string;
  issuedAt: number;
  expiresAt: number;
}

/** What minting and reading need: the keyring and the clock. */
export interface PortalLinkContext {
  keyring: Keyring;
  now: () => number;
}

export type PortalLinkRefusal = 'malformed' | 'bad_signature' | 'expired' | 'minter_revoked';

/** A token for `grant`, signed with the keyring's newest key. The caller checks the lifetime (`checkLifetime`). */
export function mintPortalLink(ctx: PortalLinkContext, grant: PortalGrant): string {
  const body = Buffer.from(JSON.stringify(grant), 'utf8').toString('base64url');
  const keyId = ctx.keyring.currentKeyId;
  const { mac } = ctx.keyring.sign(`${PREFIX}.${keyId}.${body}`, PURPOSE);
  return `${PREFIX}.${keyId}.${body}.${mac}`;
}

/** Whether a requested lifetime (ms) is allowed: a whole number from 1 s to 24 h. */
export function checkLifetime(ms: number): string | undefined {
  if (!Number.isSafeInteger(ms) || ms < 1_000 || ms > PORTAL_LINK_MAX_MS)
    return `must be a whole number of milliseconds from 1000 to ${PORTAL_LINK_MAX_MS} (24 hours)`;
  return undefined;
}

/** The grant of a token, or why it is refused: not a portal link, not signed by a key of the ring, or past its expiry. */
export function readPortalLink(
  ctx: PortalLinkContext,
  token: string,
): { ok: true; grant: PortalGrant } | { ok: false; refusal: PortalLinkRefusal } {
  if (token.length > PORTAL_LINK_MAX_CHARS) return { ok: false, refusal: 'malformed' };
  const parts = token.split('.');
  if (parts.length !== 4 || parts[0] !== PREFIX) return { ok: false, refusal: 'malformed' };
  const [, keyId, body, mac] = parts as [string, string, string, string];
  if (!ctx.keyring.verify({ keyId, data: `${PREFIX}.${keyId}.${body}`, mac }, PURPOSE))
    return { ok: false, refusal: 'bad_signature' };
  const grant = parseGrant(body);
  if (grant === undefined) return { ok: false, refusal: 'malformed' };
  // A signed grant living longer than the bound was not minted here: refused as if forged.
  if (grant.expiresAt - grant.issuedAt > PORTAL_LINK_MAX_MS) return { ok: false, refusal: 'bad_signature' };
  if (ctx.now() >= grant.expiresAt) return { ok: false, refusal: 'expired' };
  return { ok: true, grant };
}

function parseGrant(body: string): PortalGrant | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const text = (x: unknown) => typeof x === 'string' && x.length > 0 && x.length <= 256;
  const time = (x: unknown) => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
  if (!text(v.tenant) || !text(v.mintedBy) || !text(v.id) || !time(v.issuedAt) || !time(v.expiresAt)) return undefined;
  if (v.destinationId !== undefined && !text(v.destinationId)) return undefined;
  if (v.mintedByTokenId !== undefined && !text(v.mintedByTokenId)) return undefined;
  return {
    tenant: v.tenant as string,
    ...(v.destinationId !== undefined && { destinationId: v.destinationId as string }),
    mintedBy: v.mintedBy as string,
    ...(v.mintedByTokenId !== undefined && { mintedByTokenId: v.mintedByTokenId as string }),
    id: v.id as string,
    issuedAt: v.issuedAt as number,
    expiresAt: v.expiresAt as number,
  };
}
