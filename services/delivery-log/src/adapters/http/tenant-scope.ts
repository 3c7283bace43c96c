import type { IncomingMessage } from 'node:http';
import type { SluiceConfig } from '@sluice/config';
import type { RecordKind } from '@sluice/destination-catalog';
import type { MessageSummary, MessageView } from '../db/read-store.ts';
import { seesOwnDestination } from '../../domain/access-policy.ts';
import { callerOf } from './caller.ts';
import { HttpError } from './http-io.ts';

/**
 * What the caller of a request may see (docs/reference/tenants.md): everything for the admin
 * (`tenant` undefined), else its tenant's destinations and sources, by id, as the config in force
 * has them (the file's and the runtime ones). A message is its tenant's when its source is: a
 * destination names only sources of its own tenant, so a tenant's sources feed only its destinations.
 * A portal link limited to one destination (docs/reference/portal-links.md) sees that destination
 * only, and the messages of the sources it names.
 */
export interface TenantScope {
  tenant: string | undefined;
  seesDestination(id: string): boolean;
  seesSource(id: string): boolean;
  seesTenant(tenant: string): boolean;
  /** The tenant's source ids; undefined for the admin (every source). */
  sourceIds: readonly string[] | undefined;
  /** The one destination a portal link is limited to: what a replay is held to; undefined otherwise. */
  onlyDestination: string | undefined;
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
      onlyDestination: undefined,
    };
  const { tenant } = principal;
  const seen = config.destinations.filter((d) => d.tenant === tenant && seesOwnDestination(principal, d.id));
  const destinations = new Set(seen.map((d) => d.id));
  const only = principal.role === 'portal' ? principal.destinationId : undefined;
  const fed = new Set(seen.flatMap((d) => d.sourceIds));
  const sourceIds = config.sources
    .filter((s) => s.tenant === tenant && (only === undefined || fed.has(s.id)))
    .map((s) => s.id);
  const sources = new Set(sourceIds);
  return {
    tenant,
    seesDestination: (id) => destinations.has(id),
    seesSource: (id) => sources.has(id),
    seesTenant: (t) => t === tenant,
    sourceIds,
    onlyDestination: only,
  };
}

/**
 * Whether the caller of `req` sees a destination or source definition: the admin every one, a tenant
 * token its tenant's, a portal link limited to one destination that destination and the sources it names.
 */
export function seesResource(
  req: IncomingMessage,
  item: { kind: RecordKind; id: string; tenant: string },
  config: SluiceConfig,
): boolean {
  const principal = callerOf(req);
  if (principal.role === 'admin') return true;
  if (principal.tenant !== item.tenant) return false;
  if (principal.role !== 'portal' || principal.destinationId === undefined) return true;
  const scope = scopeOf(req, config);
  return item.kind === 'destination' ? scope.seesDestination(item.id) : scope.seesSource(item.id);
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

/**
 * A message as a portal link limited to one destination sees it: the deliveries, attempts and
 * replays of that destination only (a replay of every destination, `destinationId: null`, kept),
 * the attempts' total being the count listed; as it is for every other caller.
 */
export function heldToDestination<M extends MessageShape>(scope: TenantScope, message: M): M {
  const only = scope.onlyDestination;
  if (only === undefined) return message;
  const mine = (x: { destinationId: string | null }) => x.destinationId === only;
  if (!('attempts' in message)) return { ...message, deliveries: message.deliveries.filter(mine) };
  const attempts = message.attempts.filter(mine);
  const replays = message.replays.filter((r) => r.destinationId === null || mine(r));
  const totals = { ...message.totals, attempts: attempts.length, replays: replays.length };
  return { ...message, deliveries: message.deliveries.filter(mine), attempts, replays, totals };
}

/** What `heldToDestination` narrows: a message of a list, or a message's whole view. */
type MessageShape = Pick<MessageSummary, 'deliveries'> | MessageView;
