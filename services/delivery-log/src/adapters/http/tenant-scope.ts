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
  /**
   * The destination ids it sees; undefined for the admin (every destination). A list of rows by
   * destination filters by them in its query, so a page is full whenever more rows are the caller's.
   */
  destinationIds: readonly string[] | undefined;
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
      destinationIds: undefined,
      onlyDestination: undefined,
    };
  const { tenant } = principal;
  const seen = config.destinations.filter((d) => d.tenant === tenant && seesOwnDestination(principal, d.id));
  const destinationIds = seen.map((d) => d.id);
  const destinations = new Set(destinationIds);
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
    destinationIds,
    onlyDestination: only,
  };
}

/** A destination or source definition as the lists and reads show it. */
export interface ResourceItem {
  id: string;
  tenant: string;
}

/**
 * Which destination or source definitions the caller of `req` sees: the admin every one, a tenant
 * token its tenant's, a portal link limited to one destination that destination and the sources it
 * names. Worked out once per request, so a list filters every item before it is paged.
 */
export function resourceFilter(
  req: IncomingMessage,
  seen: { kind: RecordKind; config: SluiceConfig },
): (item: ResourceItem) => boolean {
  const principal = callerOf(req);
  if (principal.role === 'admin') return () => true;
  const { tenant } = principal;
  if (principal.role !== 'portal' || principal.destinationId === undefined) return (item) => item.tenant === tenant;
  const scope = scopeOf(req, seen.config);
  const sees = seen.kind === 'destination' ? scope.seesDestination : scope.seesSource;
  return (item) => item.tenant === tenant && sees(item.id);
}

/** The ids of a kind whose last deletion was from a tenant (the catalog's `deletedIn`). */
export type DeletedIds = (query: { kind: RecordKind; tenant: string }) => string[];

/** What an audit list covers: its kind, what is in force of it, what the caller sees of that, and the ids deleted. */
export interface AuditedKind<T extends { id: string }> {
  kind: RecordKind;
  /** Every one in force, whoever's (the file's and the runtime ones): a deleted id declared again is its new owner's. */
  inForce: readonly T[];
  /** Whether the caller sees one in force. */
  sees: (item: T) => boolean;
  /** Undefined when runtime destinations are off: nothing was deleted. */
  deletedIn: DeletedIds | undefined;
}

/**
 * The ids whose audit (changes, recorded actions) the caller of `req` lists
 * (docs/reference/tenants.md): undefined for the admin (every one); else those it sees in force,
 * and for a whole tenant — not a portal link held to one destination — also those its tenant
 * deleted last and nobody holds again, whose audit stays its own while the log keeps it. An id is
 * never handed to another tenant, so none of these is another's.
 */
export function auditedIds<T extends { id: string }>(
  req: IncomingMessage,
  audited: AuditedKind<T>,
): readonly string[] | undefined {
  const principal = callerOf(req);
  if (principal.role === 'admin') return undefined;
  const seen = audited.inForce.filter(audited.sees).map((item) => item.id);
  if (principal.role === 'portal' && principal.destinationId !== undefined) return seen;
  const deleted = audited.deletedIn?.({ kind: audited.kind, tenant: principal.tenant }) ?? [];
  if (deleted.length === 0) return seen;
  const held = new Set(audited.inForce.map((item) => item.id));
  return [...seen, ...deleted.filter((id) => !held.has(id))];
}

/** What a request aims at: a destination, a source, both, or neither. */
export interface Aim {
  destinationId?: string;
  sourceId?: string;
}

/**
 * Whether what a request aims at is the caller's: `unseen` when it names another tenant's
 * destination or source, which the route answers as one that does not exist; a request that names
 * neither aims at everything the caller sees.
 */
export function aimedAt(scope: TenantScope, aim: Aim): 'seen' | 'unseen' {
  const { destinationId, sourceId } = aim;
  const seen =
    (destinationId === undefined || scope.seesDestination(destinationId)) &&
    (sourceId === undefined || scope.seesSource(sourceId));
  return seen ? 'seen' : 'unseen';
}

/**
 * `aimedAt`, for the routes a tenant token must aim at one of its own (a replay by filter): `400`
 * naming `destinationId` when it aims at neither.
 */
export function aimOf(scope: TenantScope, aim: Aim): 'seen' | 'unseen' {
  if (scope.tenant !== undefined && aim.destinationId === undefined && aim.sourceId === undefined)
    throw new HttpError(
      400,
      'invalid_parameter',
      'destinationId or sourceId is required: a tenant token names one of its destinations or sources',
      'destinationId',
    );
  return aimedAt(scope, aim);
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
