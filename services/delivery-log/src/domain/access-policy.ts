/**
 * The one authorization policy of the delivery log's API (docs/reference/tokens.md, "Scopes"): for
 * every route, by its method and its OpenAPI path, the scope a caller needs, and for every role the
 * scopes it holds. The API's handler asks it before any route runs; a route it does not list is
 * refused to everyone, the admin included, so a route added without a line here cannot be reached.
 */

/**
 * Who a token speaks for: the config's admin token, a tenant token of one of the two roles, or a
 * portal link (docs/reference/portal-links.md): one tenant's view, optionally one destination of it.
 */
export const ROLES = ['admin', 'manage', 'read', 'portal'] as const;
export type Role = (typeof ROLES)[number];

/** The token id the config's admin token is recorded by (`byTokenId`): it has no record of its own. */
export const ADMIN_TOKEN_ID = 'admin';

/**
 * Who a request authenticated as: the admin (the config's token, named `admin`), a tenant token,
 * by its name (what an action's `by` records) and its tenant, or a portal link, named
 * `portal:<link id> by <minter>`, for its tenant and, when its grant names one, one destination.
 * `tokenId` is what actions and changes record as `byTokenId`: `ADMIN_TOKEN_ID` for the admin, a
 * tenant token's id (`tok_…`), a portal link's id.
 */
export type Principal = { name: string; tokenId: string } & (
  | { role: 'admin' }
  | { role: 'manage' | 'read'; tenant: string }
  | { role: 'portal'; tenant: string; destinationId?: string }
);

/** What a route asks of its caller: the admin, or a tenant token that may read or also change its tenant's things. */
export const SCOPES = ['admin', 'tenant:manage', 'tenant:read'] as const;
export type Scope = (typeof SCOPES)[number];

/** The scopes each role holds: a wider one includes the narrower. */
const GRANTS: Record<Role, readonly Scope[]> = {
  admin: ['admin', 'tenant:manage', 'tenant:read'],
  manage: ['tenant:manage', 'tenant:read'],
  read: ['tenant:read'],
  portal: ['tenant:manage', 'tenant:read'],
};

/** A route as the policy names it: its method and its OpenAPI path (`GET /api/v1/messages/{sourceId}/{messageId}`). */
export type RouteKey = `${'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'} /api/${string}`;

const DESTINATION = '/api/v1/destinations/{destinationId}';
const ENDPOINT = `${DESTINATION}/endpoints/{endpointRef}`;
const DEFINITION = '/api/v1/destination-definitions/{destinationId}';
const SOURCE = '/api/v1/source-definitions/{sourceId}';

/**
 * The table: route × scope. A tenant token reads its tenant's messages, attempts, dead letters,
 * ledger, destinations and sources (`tenant:read`), and a `manage` one also replays, acts on and
 * changes them (`tenant:manage`); tokens themselves are the admin's.
 */
export const ROUTE_SCOPES: Readonly<Record<RouteKey, Scope>> = {
  'GET /api/v1/messages': 'tenant:read',
  'GET /api/v1/messages/{sourceId}/{messageId}': 'tenant:read',
  'GET /api/v1/batches/{batchId}': 'tenant:read',
  'POST /api/v1/messages/{sourceId}/{messageId}/replay': 'tenant:manage',
  'POST /api/v1/replays': 'tenant:manage',
  'GET /api/v1/destinations': 'tenant:read',
  [`GET ${DESTINATION}/health`]: 'tenant:read',
  [`POST ${DESTINATION}/pause`]: 'tenant:manage',
  [`POST ${DESTINATION}/resume`]: 'tenant:manage',
  [`POST ${DESTINATION}/disable`]: 'tenant:manage',
  [`POST ${DESTINATION}/enable`]: 'tenant:manage',
  [`POST ${ENDPOINT}/pause`]: 'tenant:manage',
  [`POST ${ENDPOINT}/resume`]: 'tenant:manage',
  [`POST ${ENDPOINT}/disable`]: 'tenant:manage',
  [`POST ${ENDPOINT}/enable`]: 'tenant:manage',
  'GET /api/v1/destination-actions': 'tenant:read',
  'GET /api/v1/destination-definitions': 'tenant:read',
  'POST /api/v1/destination-definitions': 'tenant:manage',
  'GET /api/v1/destination-changes': 'tenant:read',
  [`GET ${DEFINITION}`]: 'tenant:read',
  [`PUT ${DEFINITION}`]: 'tenant:manage',
  [`PATCH ${DEFINITION}`]: 'tenant:manage',
  [`DELETE ${DEFINITION}`]: 'tenant:manage',
  [`POST ${DEFINITION}/rotate-secret`]: 'tenant:manage',
  [`POST ${DEFINITION}/test`]: 'tenant:manage',
  'GET /api/v1/source-definitions': 'tenant:read',
  'POST /api/v1/source-definitions': 'tenant:manage',
  'GET /api/v1/source-changes': 'tenant:read',
  [`GET ${SOURCE}`]: 'tenant:read',
  [`PATCH ${SOURCE}`]: 'tenant:manage',
  [`DELETE ${SOURCE}`]: 'tenant:manage',
  [`POST ${SOURCE}/write-keys`]: 'tenant:manage',
  [`DELETE ${SOURCE}/write-keys/{keyId}`]: 'tenant:manage',
  'GET /api/v1/ledger': 'tenant:read',
  'GET /api/v1/ledger/unaccounted': 'tenant:read',
  'GET /api/v1/sources/{sourceId}/events': 'tenant:read',
  'GET /api/v1/tokens': 'admin',
  'POST /api/v1/tokens': 'admin',
  'DELETE /api/v1/tokens/{tokenId}': 'admin',
  'POST /api/v1/portal-links': 'tenant:manage',
};

/**
 * The portal role's rule per route, on top of its scopes: the routes of the operator's side that a
 * portal link may not call although its scopes would allow them (`denied`: creating or deleting
 * destinations, anything that changes sources or their write keys, minting portal links; token
 * routes need `admin` already).
 */
const PORTAL_DENIED: ReadonlySet<RouteKey> = new Set<RouteKey>([
  'POST /api/v1/destination-definitions',
  `DELETE ${DEFINITION}`,
  'POST /api/v1/source-definitions',
  `PATCH ${SOURCE}`,
  `DELETE ${SOURCE}`,
  `POST ${SOURCE}/write-keys`,
  `DELETE ${SOURCE}/write-keys/{keyId}`,
  'POST /api/v1/portal-links',
]);

/** The scope a route needs, or undefined for a route the policy does not list. */
export function scopeOf(method: string, path: string): Scope | undefined {
  return (ROUTE_SCOPES as Record<string, Scope>)[`${method} ${path}`];
}

/** Whether a role may call a route: never one the policy does not list, nor one the portal rule denies a portal link. */
export function allows(role: Role, route: { method: string; path: string }): boolean {
  const key = `${route.method} ${route.path}` as RouteKey;
  const scope = scopeOf(route.method, route.path);
  if (role === 'portal' && PORTAL_DENIED.has(key)) return false;
  return scope !== undefined && GRANTS[role].includes(scope);
}

/**
 * Whether a caller sees a destination of its tenant (the tenant is checked by the caller of this
 * rule): a portal link whose grant names a destination sees that one only, every other principal
 * each of its tenant's.
 */
export function seesOwnDestination(principal: Principal, destinationId: string): boolean {
  return (
    principal.role !== 'portal' || principal.destinationId === undefined || principal.destinationId === destinationId
  );
}
