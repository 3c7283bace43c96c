import type { IncomingMessage } from 'node:http';
import type { SluiceConfig } from '@sluice/config';
import { callerOf } from './caller.ts';
import { HttpError } from './http-io.ts';

/**
 * What the caller of a request may see (docs/reference/tenants.md): everything for the admin
 * (`tenant` undefined), else its tenant's destinations and sources, by id, as the config in force
 * has them (the file's and the runtime ones). A message is its tenant's when its source is: a
 * destination names only sources of its own tenant, so a tenant's sources feed only its destinations.
 */
export interface TenantScope {
  tenant: string | undefined;
  seesDestination(id: string): boolean;
  seesSource(id: string): boolean;
  seesTenant(tenant: string): boolean;
  /** The tenant's source ids; undefined for the admin (every source). */
  sourceIds: readonly string[] | undefined;
}

/** The scope of the caller of `req`, over the config in force. */
export function scopeOf(req: IncomingMessage, config: SluiceConfig): TenantScope {
  const principal = callerOf(req);
  if (principal.role === 'admin')
    return {
      tenant: undefined,
      seesDestination: () => true,
      seesSource: () => true,
      seesTenant: () => true,
      sourceIds: undefined,
    };
  const { tenant } = principal;
  const destinations = new Set(config.destinations.filter((d) => d.tenant === tenant).map((d) => d.id));
  const sourceIds = config.sources.filter((s) => s.tenant === tenant).map((s) => s.id);
  const sources = new Set(sourceIds);
  return {
    tenant,
    seesDestination: (id) => destinations.has(id),
    seesSource: (id) => sources.has(id),
    seesTenant: (t) => t === tenant,
    sourceIds,
  };
}

/** Whether the caller of `req` sees what belongs to `tenant`: the admin every tenant, a tenant token its own. */
export function seesTenant(req: IncomingMessage, tenant: string): boolean {
  const principal = callerOf(req);
  return principal.role === 'admin' || principal.tenant === tenant;
}

/**
 * Whether what a request aims at (a destination, a source, or both) is the caller's, for the routes
 * a tenant token must aim at one of its own (`400` naming `destinationId` when it aims at neither):
 * `unseen` for another tenant's, which the route answers as one that does not exist.
 */
export function aimOf(scope: TenantScope, aim: { destinationId?: string; sourceId?: string }): 'seen' | 'unseen' {
  if (scope.tenant === undefined) return 'seen';
  const { destinationId, sourceId } = aim;
  if (destinationId === undefined && sourceId === undefined)
    throw new HttpError(
      400,
      'invalid_parameter',
      'destinationId or sourceId is required: a tenant token names one of its destinations or sources',
      'destinationId',
    );
  const seen =
    (destinationId === undefined || scope.seesDestination(destinationId)) &&
    (sourceId === undefined || scope.seesSource(sourceId));
  return seen ? 'seen' : 'unseen';
}

/** The answer for another tenant's resource: the same 404 as for one that does not exist. */
export const unseen = (what: string): HttpError => new HttpError(404, 'not_found', what);
