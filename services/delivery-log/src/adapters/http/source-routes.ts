import type { IncomingMessage } from 'node:http';
import {
  type Catalog,
  type CatalogWriter,
  type FileConfig,
  OUTCOME_STATUS,
  type SourceEntry,
  type SourceOutcome,
  showSource,
} from '@sluice/destination-catalog';
import type { SourceItem } from '@sluice/log-api';
import type { Logger } from '@sluice/logging';
import { parseChangesQuery } from '../../domain/audit.ts';
import { etagOf } from '../../domain/definitions.ts';
import { pageById, parseIdPageQuery } from '../../domain/id-pages.ts';
import { sourceChangeOf } from '../../domain/sources.ts';
import type { ChangeAudit } from '../db/change-audit.ts';
import { callerOf } from './caller.ts';
import { audit, catalogOff, ifMatch, inCallerTenant, refusalError } from './catalog-http.ts';
import { badRequest, HttpError, pathId, readJson, type Route, type RouteAnswer } from './http-io.ts';
import { seesTenant, unseen } from './tenant-scope.ts';

/** The catalog as the source routes change it: what the service's reader has read, and the writer. */
export interface SourceCatalog {
  current: () => Catalog;
  writer: Pick<CatalogWriter, 'createSource' | 'renameSource' | 'deleteSource' | 'mintWriteKey' | 'revokeWriteKey'>;
}

export interface SourceRouteDeps {
  /** The config file in force, unmerged: its sources are listed read-only (never their keys), its ids refused. */
  file: () => FileConfig;
  /** Undefined when `runtimeDestinations` is not configured: the write routes answer 409. */
  catalog: SourceCatalog | undefined;
  /** The sources' audit: each change made here recorded, and listed. */
  changes: Pick<ChangeAudit, 'record' | 'list'>;
  now: () => number;
  /** Where a change the audit could not record is logged (the change itself is made). */
  logger: Logger;
}

const BASE = '/api/v1/source-definitions';
const ONE = new RegExp(`^${BASE}/([^/]+)$`);
const KEYS = new RegExp(`^${BASE}/([^/]+)/write-keys$`);
const ONE_KEY = new RegExp(`^${BASE}/([^/]+)/write-keys/([^/]+)$`);

/** Every source as the list shows it: the file's (read-only, never a key), then the runtime ones (key ids and times). */
function allSources(deps: SourceRouteDeps): SourceItem[] {
  const file = deps.file();
  const items: SourceItem[] = file.config.sources.map((s) => ({
    origin: 'file',
    id: s.id,
    name: s.name,
    tenant: s.tenant,
    file: file.path,
  }));
  for (const entry of deps.catalog?.current().sources.values() ?? [])
    items.push({ origin: 'runtime', ...showSource(entry) });
  return items;
}

/** A change made, as the API answers it: the source (key ids, never digests), its ETag, and any key minted (shown this once). */
function answer(outcome: SourceOutcome): RouteAnswer {
  if (!('record' in outcome)) throw refusalError(outcome, 'source');
  if (outcome.kind === 'deleted') return [200, { id: outcome.id, version: outcome.version }];
  const body = { source: showSource(outcome.entry), ...(outcome.writeKey && { writeKey: outcome.writeKey }) };
  return [OUTCOME_STATUS[outcome.kind], body, { etag: etagOf(outcome.entry.version) }];
}

/** The body of a rename: `{ name }`, nothing else. */
function renameBody(raw: unknown): { name: unknown } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new HttpError(400, 'invalid_body', 'the body must be a JSON object');
  const { name, ...rest } = raw as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined)
    throw new HttpError(400, 'invalid_parameter', `${unknown} cannot be changed: only name can`, unknown);
  if (name === undefined) throw new HttpError(400, 'invalid_parameter', 'name is required', 'name');
  return { name };
}

/**
 * The runtime sources' routes (docs/reference/runtime-sources.md, "API"): the list with the file's
 * sources read-only, and create, read, rename, delete, mint a write key and revoke one of the
 * runtime ones, each change but create compare-and-set by `If-Match`. A key minted is in the
 * answer that minted it, and in no other.
 */
export function sourceRoutes(deps: SourceRouteDeps): Route[] {
  const catalog = (): SourceCatalog => {
    if (deps.catalog === undefined) throw catalogOff('source');
    return deps.catalog;
  };
  /** The answer to a change, recorded in the audit when it was made; `before`: the source it was made on, if any. */
  const settle = async (outcome: SourceOutcome, made: { before?: SourceEntry; by: string }): Promise<RouteAnswer> => {
    const answered = answer(outcome);
    if ('record' in outcome) {
      const context = { before: made.before?.definition.writeKeys ?? [], at: deps.now(), by: made.by };
      await audit({ ...deps, kind: 'source' }, sourceChangeOf(outcome, context));
    }
    return answered;
  };
  /** What a change of one source starts from: the writer, who, when, the id and the version `If-Match` names. */
  /** The sources the caller sees: all of them for the admin, its tenant's for a tenant token. */
  const visible = (req: IncomingMessage): SourceItem[] => allSources(deps).filter((s) => seesTenant(req, s.tenant));
  const versioned = (m: RegExpExecArray, req: IncomingMessage) => {
    const { writer, current } = catalog();
    const id = pathId('sourceId', m[1]!);
    const item = allSources(deps).find((s) => s.id === id);
    if (item !== undefined && !seesTenant(req, item.tenant)) throw unseen('no source has this id');
    const request = { by: callerOf(req).name, at: deps.now(), id, expectedVersion: ifMatch(req) };
    return { writer, request, before: current().sources.get(id) };
  };
  const route = (method: string, name: string, run: Route['run']): Route => ({
    method,
    pattern: ONE,
    name,
    params: [],
    run,
  });
  return [
    {
      ...route('GET', 'listSources', async (_m, url, req) => {
        const query = parseIdPageQuery(url.searchParams);
        if (!query.ok) throw badRequest(query);
        const { page, nextCursor } = pageById(visible(req), query.value);
        return [200, { sources: page, nextCursor }];
      }),
      pattern: new RegExp(`^${BASE}$`),
      params: ['limit', 'cursor'],
    },
    {
      ...route('POST', 'createSource', async (_m, _url, req) => {
        const { writer } = catalog();
        const source = inCallerTenant(req, { body: await readJson(req), form: 'whole' });
        const by = callerOf(req).name;
        return settle(await writer.createSource({ by, at: deps.now(), source }), { by });
      }),
      pattern: new RegExp(`^${BASE}$`),
    },
    {
      ...route('GET', 'listSourceChanges', async (_m, url, req) => {
        const query = parseChangesQuery(url.searchParams, 'sourceId');
        if (!query.ok) throw badRequest(query);
        const ids = new Set(visible(req).map((s) => s.id));
        const all = callerOf(req).role === 'admin';
        const changes = (await deps.changes.list(query.value)).filter((c) => all || ids.has(c.subjectId));
        return [200, { changes: changes.map(({ subjectId, ...c }) => ({ sourceId: subjectId, ...c })) }];
      }),
      pattern: /^\/api\/v1\/source-changes$/,
      params: ['sourceId', 'limit'],
    },
    route('GET', 'getSource', async (m, _url, req) => {
      const id = pathId('sourceId', m[1]!);
      const item = visible(req).find((s) => s.id === id);
      if (!item) throw new HttpError(404, 'not_found', 'no source has this id');
      return item.origin === 'runtime' ? [200, item, { etag: etagOf(item.version) }] : [200, item];
    }),
    route('PATCH', 'renameSource', async (m, _url, req) => {
      const { writer, request, before } = versioned(m, req);
      const { name } = renameBody(await readJson(req));
      return settle(await writer.renameSource({ ...request, name }), { before, by: request.by });
    }),
    route('DELETE', 'deleteSource', async (m, _url, req) => {
      const { writer, request, before } = versioned(m, req);
      return settle(await writer.deleteSource(request), { before, by: request.by });
    }),
    {
      ...route('POST', 'mintWriteKey', async (m, _url, req) => {
        const { writer, request, before } = versioned(m, req);
        return settle(await writer.mintWriteKey(request), { before, by: request.by });
      }),
      pattern: KEYS,
    },
    {
      ...route('DELETE', 'revokeWriteKey', async (m, _url, req) => {
        const { writer, request, before } = versioned(m, req);
        const keyId = pathId('keyId', m[2]!);
        return settle(await writer.revokeWriteKey({ ...request, keyId }), { before, by: request.by });
      }),
      pattern: ONE_KEY,
    },
  ];
}
