import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { SluiceConfig } from '@sluice/config';
import type { Keyring } from '@sluice/secret-keyring';
import { checkLifetime, mintPortalLink, PORTAL_LINK_DEFAULT_MS, type PortalGrant } from '../../domain/portal-link.ts';
import { callerOf } from './caller.ts';
import { HttpError, readJson, type Route } from './http-io.ts';

export interface PortalRouteDeps {
  /** The runtime keyring links are signed with; undefined when `runtimeDestinations` is not configured (409). */
  keyring: Keyring | undefined;
  config: () => SluiceConfig;
  now: () => number;
}

/** What a mint asks for, once checked. */
interface MintRequest {
  tenant: string;
  destinationId: string | undefined;
  ttlMs: number;
}

const TENANT = /^[A-Za-z0-9._-]{1,100}$/;
const FIELDS = new Set(['tenant', 'destinationId', 'ttlMs']);
const invalid = (field: string, problem: string) =>
  new HttpError(400, 'invalid_parameter', `${field} ${problem}`, field);

/**
 * The mint's body, checked against its caller (docs/reference/portal-links.md): the admin names the
 * tenant; a tenant token mints for its own (naming another is a 403 on `tenant`); a destination,
 * when named, must be one of that tenant's (404 otherwise, as for one that does not exist).
 */
function mintRequest(req: IncomingMessage, body: unknown, config: SluiceConfig): MintRequest {
  const fields = body === undefined ? {} : body;
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields))
    throw new HttpError(400, 'invalid_body', 'the body must be a JSON object');
  const given = fields as Record<string, unknown>;
  const unknown = Object.keys(given).find((k) => !FIELDS.has(k));
  if (unknown !== undefined) throw invalid(unknown, 'is not a field of a portal link request');
  const caller = callerOf(req);
  if (given.tenant !== undefined && (typeof given.tenant !== 'string' || !TENANT.test(given.tenant)))
    throw invalid('tenant', 'must be 1-100 of A-Z a-z 0-9 . _ -');
  if (caller.role !== 'admin' && given.tenant !== undefined && given.tenant !== caller.tenant)
    throw new HttpError(
      403,
      'forbidden',
      `tenant must be ${caller.tenant}: a tenant token mints only for its own tenant`,
      'tenant',
    );
  const tenant = caller.role === 'admin' ? (given.tenant as string | undefined) : caller.tenant;
  if (tenant === undefined) throw invalid('tenant', 'is required: the admin names the tenant a link is for');
  const known = config.destinations.some((d) => d.tenant === tenant) || config.sources.some((s) => s.tenant === tenant);
  if (!known) throw new HttpError(404, 'not_found', 'no destination or source of the config has this tenant');
  if (given.destinationId !== undefined && typeof given.destinationId !== 'string')
    throw invalid('destinationId', 'must be a string');
  const destinationId = given.destinationId as string | undefined;
  if (destinationId !== undefined && !config.destinations.some((d) => d.id === destinationId && d.tenant === tenant))
    throw new HttpError(404, 'not_found', 'no destination of the tenant has this id');
  const ttlMs = given.ttlMs ?? PORTAL_LINK_DEFAULT_MS;
  const problem = typeof ttlMs === 'number' ? checkLifetime(ttlMs) : 'must be a number';
  if (problem !== undefined) throw invalid('ttlMs', problem);
  return { tenant, destinationId, ttlMs: ttlMs as number };
}

/** Where the console is, as the caller reached the API: the link opens it there. */
function consoleBase(req: IncomingMessage): string {
  const proto = req.headers['x-forwarded-proto'] === 'https' ? 'https' : 'http';
  return `${proto}://${req.headers.host ?? 'localhost'}`;
}

/**
 * `POST /api/v1/portal-links` (docs/reference/portal-links.md): a signed, expiring link to one
 * tenant's view of the console, optionally one destination of it. Signed with the runtime keyring,
 * so it needs `runtimeDestinations` (409 naming `runtimeDestinations.keyring` without it). Nothing
 * is stored: the link is its own record, refused once expired or once its key leaves the ring.
 */
export function portalRoutes(deps: PortalRouteDeps): Route[] {
  return [
    {
      method: 'POST',
      pattern: /^\/api\/v1\/portal-links$/,
      name: 'createPortalLink',
      params: [],
      run: async (_m, _url, req) => {
        const { keyring } = deps;
        if (keyring === undefined)
          throw new HttpError(
            409,
            'portal_links_off',
            'portal links are signed with the runtime keyring: configure runtimeDestinations.keyring',
          );
        const mint = mintRequest(req, await readJson(req), deps.config());
        const issuedAt = deps.now();
        const caller = callerOf(req);
        const grant: PortalGrant = {
          tenant: mint.tenant,
          ...(mint.destinationId !== undefined && { destinationId: mint.destinationId }),
          mintedBy: caller.name,
          ...(caller.role !== 'admin' && { mintedByTokenId: caller.tokenId }),
          id: randomBytes(9).toString('base64url'),
          issuedAt,
          expiresAt: issuedAt + mint.ttlMs,
        };
        const token = mintPortalLink({ keyring, now: deps.now }, grant);
        const url = `${consoleBase(req)}/console/#portal=${token}`;
        return [201, { id: grant.id, url, token, expiresAt: new Date(grant.expiresAt).toISOString() }];
      },
    },
  ];
}
