/**
 * The one authorization policy of the delivery log's API (docs/reference/tokens.md, "Scopes"): for
 * every route, by its method and its OpenAPI path, the scope a caller needs, and for every role the
 * scopes it holds. The API's handler asks it before any route runs; a route it does not list is
 * refused to everyone, the admin included, so a route added without a line here cannot be reached.
 */

/** Who a token speaks for: the config's admin token, or a tenant token of one of the two roles. */
export const ROLES = ['admin', 'manage', 'read'] as const;
export type Role = (typeof ROLES)[number];

/**
 * Who a request authenticated as: the admin (the config's token, named `admin`), or a tenant token,
 * by its name (what an action's `by` records) and its tenant.
 */
export type Principal = { role: 'admin'; name: string } | { role: 'manage' | 'read'; name: string; tenant: string };

/** What a route asks of its caller: the admin, or a tenant token that may read or also change its tenant's things. */
export const SCOPES = ['admin', 'tenant:manage', 'tenant:read'] as const;
export type Scope = (typeof SCOPES)[number];

/** The scopes each role holds: a wider one includes the narrower. */
const GRANTS: Record<Role, readonly Scope[]> = {
  admin: ['admin', 'tenant:manage', 'tenant:read'],
  manage: ['tenant:manage', 'tenant:read'],
  read: ['tenant:read'],
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
};

/** The scope a route needs, or undefined for a route the policy does not list. */
export function scopeOf(method: string, path: string): Scope | undefined {
  return (ROUTE_SCOPES as Record<string, Scope>)[`${method} ${path}`];
}

/** Whether a role may call a route: never one the policy does not list. */
export function allows(role: Role, route: { method: string; path: string }): boolean {
  const scope = scopeOf(route.method, route.path);
  return scope !== undefined && GRANTS[role].includes(scope);
}
