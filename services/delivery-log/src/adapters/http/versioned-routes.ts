import type { IncomingMessage } from 'node:http';
import {
  type Catalog,
  type ChangeBy,
  type Deleted,
  type FileConfig,
  OUTCOME_STATUS,
  type Refusal,
  type VersionedRequest,
} from '@sluice/destination-catalog';
import type { SluiceConfig } from '@sluice/config';
import type { Logger } from '@sluice/logging';
import { type Actor, type AuditedChange, deletionChange, parseChangesQuery } from '../../domain/audit.ts';
import { etagOf } from '../../domain/definitions.ts';
import type { Checked } from '../../domain/query.ts';
import type { ChangeAudit } from '../db/change-audit.ts';
import { actorOf } from './caller.ts';
import { audit, catalogOff, ifMatch, inCallerTenant, refusalError } from './catalog-http.ts';
import { badRequest, HttpError, pathId, readJson, type Route, type RouteAnswer } from './http-io.ts';
import { auditedIds, type DeletedIds, resourceFilter, unseen } from './tenant-scope.ts';
import type { VersionedResource } from './versioned-resource.ts';

/** The catalog as a resource's routes change it: what the service's reader has read, the writer, and the ids deleted. */
export interface ResourceCatalog<Writer> {
  current: () => Catalog;
  writer: Writer;
  deletedIn: DeletedIds;
}

/** What a resource's routes are given. */
export interface ResourceRouteDeps<Writer> {
  /** The config file in force, unmerged: its ones are listed read-only, their ids refused. */
  file: () => FileConfig;
  /** Undefined when `runtimeDestinations` is not configured: the write routes answer 409. */
  catalog: ResourceCatalog<Writer> | undefined;
  /** The resource's audit: each change made through its routes recorded, and listed. */
  changes: Pick<ChangeAudit, 'record' | 'list'>;
  now: () => number;
  /** Where a change the audit could not record is logged (the change itself is made). */
  logger: Logger;
  /** The config in force: which destinations and sources a caller sees, and the SSRF policy a URL given is judged by. */
  config: () => SluiceConfig;
}

/** A change made (not a deletion): its kind gives the status, its entry's version the ETag. */
export interface MadeChange {
  kind: Exclude<keyof typeof OUTCOME_STATUS, Refusal['kind'] | 'deleted'>;
  entry: { id: string; version: number; updatedAt: string; updatedBy: string };
  record: unknown;
}

type Outcome<Made> = Made | Deleted | Refusal;

/** A refused change writes no record. */
const isRefusal = <Made extends MadeChange>(outcome: Outcome<Made>): outcome is Refusal => !('record' in outcome);
const isDeletion = <Made extends MadeChange>(outcome: Made | Deleted): outcome is Deleted => outcome.kind === 'deleted';

/** What the audit records of a change made: who (the token's name as the entry has it, and its id), when, the version it made, and what it was. */
const madeChange = (
  made: MadeChange,
  what: Pick<AuditedChange, 'change' | 'fields'> & Pick<Actor, 'byTokenId'>,
): AuditedChange => ({
  subjectId: made.entry.id,
  version: made.entry.version,
  change: what.change,
  by: made.entry.updatedBy,
  byTokenId: what.byTokenId,
  at: made.entry.updatedAt,
  fields: what.fields,
});

/** One of a resource as its list and a read show it: the file's (read-only) or a runtime one (with its version). */
type Listed = { id: string; tenant: string } & ({ origin: 'file' } | { origin: 'runtime'; version: number });

/**
 * What a change of one starts from: the writer, the request (who, when, the id, the version
 * `If-Match` names), the entry it is made on, and who makes it as the audit records them.
 */
export interface Versioned<Writer, Entry> {
  writer: Writer;
  request: VersionedRequest;
  before: Entry | undefined;
  actor: Actor;
}

/** What a resource's own routes (its edits) are built with. */
export interface VersionedSteps<Writer, Entry, Made> {
  /** A route on one of them (`<base>/{id}`); spread it to give another pattern. */
  route: (method: string, name: string, run: Route['run']) => Route;
  versioned: (m: RegExpExecArray, req: IncomingMessage) => Versioned<Writer, Entry>;
  /**
   * The answer to a change, recorded in the audit when it was made; `before`: the entry it was made
   * on, if any; `actor`: the token that made it.
   */
  settle: (outcome: Outcome<Made>, made: { before: Entry | undefined; actor: Actor }) => Promise<RouteAnswer>;
}

/** How a resource is listed. */
export interface Listing<Query> {
  all: () => Listed[];
  params: string[];
  query: (params: URLSearchParams) => Checked<Query>;
  page: (all: Listed[], query: Query) => unknown;
}

export interface VersionedRoutesContext<Writer, Entry, Made extends MadeChange, Query> {
  resource: VersionedResource;
  /** Its catalog, its audit, the clock and the logger. */
  deps: Omit<ResourceRouteDeps<Writer>, 'file'>;
  /**
   * Every one as the list and a read show it (the file's, then the runtime ones); the list's query
   * parameters, read by `query` (a 400 naming the one refused), and the page of them it asks for.
   */
  listing: Listing<Query>;
  /** The runtime ones in force, by id. */
  entries: (catalog: Catalog) => ReadonlyMap<string, Entry>;
  /** The body of a change made (shown this once with what it generated), and what the audit records of it. */
  shown: (outcome: Made) => unknown;
  audited: (outcome: Made, change: { before: Entry | undefined }) => Pick<AuditedChange, 'change' | 'fields'>;
  /** The writer's create and delete. */
  create: (writer: Writer, change: ChangeBy & { body: unknown }) => Promise<Outcome<Made>>;
  remove: (writer: Writer, request: VersionedRequest) => Promise<Outcome<Made>>;
  /** The resource's other changes: on one of them, or below it. */
  edits: (steps: VersionedSteps<Writer, Entry, Made>) => Route[];
}

/**
 * The routes of a resource changed at an expected version: its list (the file's read-only, then the
 * runtime ones), create, its audit, read, the resource's own edits and delete, each change
 * compare-and-set by `If-Match` and recorded in the audit.
 */
export function versionedRoutes<Writer, Entry, Made extends MadeChange, Query>(
  context: VersionedRoutesContext<Writer, Entry, Made, Query>,
): Route[] {
  const { resource, listing } = context;
  const { kind, name, idName } = resource;
  const one = new RegExp(`^${resource.base}/([^/]+)$`);
  const all = new RegExp(`^${resource.base}$`);
  const catalog = (): ResourceCatalog<Writer> => {
    if (context.deps.catalog === undefined) throw catalogOff(kind);
    return context.deps.catalog;
  };
  const answer = (outcome: Outcome<Made>): RouteAnswer => {
    if (isRefusal(outcome)) throw refusalError(outcome, kind);
    if (isDeletion(outcome)) return [200, { id: outcome.id, version: outcome.version }];
    return [OUTCOME_STATUS[outcome.kind], context.shown(outcome), { etag: etagOf(outcome.entry.version) }];
  };
  const settle = async (
    outcome: Outcome<Made>,
    made: { before: Entry | undefined; actor: Actor },
  ): Promise<RouteAnswer> => {
    const answered = answer(outcome);
    if (isRefusal(outcome)) return answered;
    const { actor } = made;
    const change = isDeletion(outcome)
      ? deletionChange(outcome, { ...actor, at: context.deps.now() })
      : madeChange(outcome, { ...context.audited(outcome, { before: made.before }), byTokenId: actor.byTokenId });
    await audit({ ...context.deps, kind }, change);
    return answered;
  };
  /**
   * The ones the caller sees: all of them for the admin, its tenant's for a tenant token
   * (docs/reference/tenants.md), filtered before a list is paged so every page but the last is full.
   */
  const sees = (req: IncomingMessage) => resourceFilter(req, { kind, config: context.deps.config() });
  const visible = (req: IncomingMessage): Listed[] => listing.all().filter(sees(req));
  const versioned = (m: RegExpExecArray, req: IncomingMessage): Versioned<Writer, Entry> => {
    const { writer, current } = catalog();
    const id = pathId(idName, m[1]!);
    // Another tenant's answers as one that does not exist.
    const item = listing.all().find((d) => d.id === id);
    if (item !== undefined && !sees(req)(item)) throw unseen(`no ${kind} has this id`);
    const actor = actorOf(req);
    const request = { by: actor.by, at: context.deps.now(), id, expectedVersion: ifMatch(req) };
    return { writer, request, before: context.entries(current()).get(id), actor };
  };
  const route = (method: string, routeName: string, run: Route['run']): Route => ({
    method,
    pattern: one,
    name: routeName,
    params: [],
    run,
  });
  return [
    {
      ...route('GET', `list${name}s`, async (_m, url, req) => {
        const query = listing.query(url.searchParams);
        if (!query.ok) throw badRequest(query);
        return [200, listing.page(visible(req), query.value)];
      }),
      pattern: all,
      params: listing.params,
    },
    {
      ...route('POST', `create${name}`, async (_m, _url, req) => {
        const { writer } = catalog();
        const at = context.deps.now();
        const body = inCallerTenant(req, { body: await readJson(req), form: 'whole' });
        const actor = actorOf(req);
        return settle(await context.create(writer, { by: actor.by, at, body }), { before: undefined, actor });
      }),
      pattern: all,
    },
    {
      ...route('GET', `list${name}Changes`, async (_m, url, req) => {
        const query = parseChangesQuery(url.searchParams, idName);
        if (!query.ok) throw badRequest(query);
        // A tenant's in the statement (its ids, deleted ones too), so that its page is full whenever more follow.
        const subjectIds = auditedIds(req, {
          kind,
          inForce: listing.all(),
          sees: sees(req),
          deletedIn: context.deps.catalog?.deletedIn,
        });
        const { changes, nextCursor } = await context.deps.changes.list({
          ...query.value,
          ...(subjectIds && { subjectIds }),
        });
        const shown = changes.map(({ subjectId, ...c }) => ({ [idName]: subjectId, ...c }));
        return [200, { changes: shown, nextCursor }];
      }),
      pattern: new RegExp(`^${resource.changes}$`),
      params: [idName, 'limit', 'cursor'],
    },
    route('GET', `get${name}`, async (m, _url, req) => {
      const id = pathId(idName, m[1]!);
      const item = visible(req).find((d) => d.id === id);
      if (!item) throw new HttpError(404, 'not_found', `no ${kind} has this id`);
      return item.origin === 'runtime' ? [200, item, { etag: etagOf(item.version) }] : [200, item];
    }),
    ...context.edits({ route, versioned, settle }),
    route('DELETE', `delete${name}`, async (m, _url, req) => {
      const { writer, request, before, actor } = versioned(m, req);
      return settle(await context.remove(writer, request), { before, actor });
    }),
  ];
}
