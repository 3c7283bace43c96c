import type { IncomingMessage } from 'node:http';
import { DEFAULT_TENANT, type SluiceConfig } from '@sluice/config';
import {
  type Catalog,
  type CatalogOutcome,
  type CatalogWriter,
  type FileConfig,
  OUTCOME_STATUS,
  redactEntry,
} from '@sluice/destination-catalog';
import { AddressPolicy, urlVerdict } from '@sluice/webhook';
import type { Logger } from '@sluice/logging';
import { type AuditedChange, parseChangesQuery } from '../../domain/audit.ts';
import {
  changedFields,
  type DefinitionItem,
  definitionUrls,
  etagOf,
  pageDefinitions,
  parseDefinitionsQuery,
} from '../../domain/definitions.ts';
import type { ChangeAudit } from '../db/change-audit.ts';
import { callerOf } from './caller.ts';
import { audit, catalogOff, ifMatch, inCallerTenant, refusalError } from './catalog-http.ts';
import { badRequest, HttpError, pathId, readJson, type Route, type RouteAnswer } from './http-io.ts';
import { seesTenant, unseen } from './tenant-scope.ts';

/** The catalog as the API changes it: what the service's reader has read, and the writer. */
export interface DefinitionCatalog {
  current: () => Catalog;
  writer: Pick<CatalogWriter, 'create' | 'replace' | 'patch' | 'delete' | 'rotate'>;
}

export interface DefinitionRouteDeps {
  /** The config file in force, unmerged: its destinations are listed read-only, its ids refused. */
  file: () => FileConfig;
  /** The config in force: its SSRF policy (`delivery.ssrf`) judges every URL given. */
  config: () => SluiceConfig;
  /** Undefined when `runtimeDestinations` is not configured: the write routes answer 409. */
  catalog: DefinitionCatalog | undefined;
  /** The audit: each change made here recorded, and listed. */
  changes: Pick<ChangeAudit, 'record' | 'list'>;
  now: () => number;
  /** Where a change the audit could not record is logged (the change itself is made). */
  logger: Logger;
}

const BASE = '/api/v1/destination-definitions';
const ONE = new RegExp(`^${BASE}/([^/]+)$`);

/** A change made, as the API answers it: the destination redacted, its ETag, and any secret generated (shown this once). */
function answer(outcome: CatalogOutcome): RouteAnswer {
  if (!('record' in outcome)) throw refusalError(outcome, 'destination');
  if (outcome.kind === 'deleted') return [200, { id: outcome.id, version: outcome.version }];
  const body = { destination: redactEntry(outcome.entry), secrets: outcome.secrets };
  return [OUTCOME_STATUS[outcome.kind], body, { etag: etagOf(outcome.entry.version) }];
}

/** What the audit records of a change made: who, when, and the names of the fields it changed. */
function auditOf(
  outcome: Extract<CatalogOutcome, { record: unknown }>,
  made: { before: unknown; at: number; by: string },
): AuditedChange {
  const { before, at, by } = made;
  if (outcome.kind === 'deleted')
    return {
      subjectId: outcome.id,
      version: outcome.version,
      change: 'deleted',
      by,
      at: new Date(at).toISOString(),
      fields: [],
    };
  const { entry } = outcome;
  const fields = changedFields(before ?? {}, entry.definition);
  return {
    subjectId: entry.id,
    version: entry.version,
    change: outcome.kind,
    by: entry.updatedBy,
    at: entry.updatedAt,
    fields,
  };
}

/** The tenant a stored definition names (undefined: none, or none stored). */
const tenantOf = (definition: { tenant?: unknown } | undefined): string | undefined =>
  typeof definition?.tenant === 'string' ? definition.tenant : undefined;

/** Refuses a URL the SSRF policy in force would refuse, naming its field. */
function checkUrls(config: SluiceConfig, body: unknown): void {
  const policy = new AddressPolicy(config.delivery.ssrf);
  for (const { field, url } of definitionUrls(body)) {
    const verdict = urlVerdict(policy, url);
    if (!verdict.allowed)
      throw new HttpError(
        400,
        'invalid_definition',
        `${field} is refused by the SSRF policy (range ${verdict.range}); delivery.ssrf.allowCidrs can allow it`,
        field,
      );
  }
}

/** Every destination as the list shows it: the file's, then the runtime ones. */
function allDefinitions(deps: DefinitionRouteDeps): DefinitionItem[] {
  const file = deps.file();
  const items: DefinitionItem[] = file.config.destinations.map((d) => ({
    origin: 'file',
    id: d.id,
    tenant: d.tenant,
    sourceIds: [...d.sourceIds],
    file: file.path,
  }));
  for (const entry of deps.catalog?.current().destinations.values() ?? []) {
    const { definition, ...rest } = redactEntry(entry);
    const sourceIds = Array.isArray(definition.sourceIds) ? (definition.sourceIds as string[]) : [];
    const tenant = typeof definition.tenant === 'string' ? definition.tenant : DEFAULT_TENANT;
    items.push({ origin: 'runtime', ...rest, tenant, sourceIds, definition });
  }
  return items;
}

/**
 * The runtime destinations' routes (docs/reference/runtime-destinations.md, "API"): the list with
 * the file's destinations read-only, and create, read, replace, patch, delete and rotate-secret of
 * the runtime ones, each change compare-and-set by `If-Match`.
 */
export function definitionRoutes(deps: DefinitionRouteDeps): Route[] {
  const catalog = (): DefinitionCatalog => {
    if (deps.catalog === undefined) throw catalogOff('destination');
    return deps.catalog;
  };
  const change = async (req: IncomingMessage) => ({
    by: callerOf(req).name,
    at: deps.now(),
    body: await readJson(req),
  });
  /** The answer to a change, recorded in the audit when it was made; `before`: the definition it was made on. */
  const settle = async (outcome: CatalogOutcome, made: { before: unknown; by: string }): Promise<RouteAnswer> => {
    const answered = answer(outcome);
    if ('record' in outcome)
      await audit({ ...deps, kind: 'destination' }, auditOf(outcome, { ...made, at: deps.now() }));
    return answered;
  };
  /**
   * What a change of one destination starts from: the writer, the request (who, when, the id and
   * the version `If-Match` names), the body, and the definition the change is made on.
   */
  /** The destinations the caller sees: all of them for the admin, its tenant's for a tenant token. */
  const visible = (req: IncomingMessage): DefinitionItem[] =>
    allDefinitions(deps).filter((d) => seesTenant(req, d.tenant));
  /** The id a change names, 404 for another tenant's destination as for none. */
  const changeable = (m: RegExpExecArray, req: IncomingMessage): string => {
    const id = pathId('destinationId', m[1]!);
    const item = allDefinitions(deps).find((d) => d.id === id);
    if (item !== undefined && !seesTenant(req, item.tenant)) throw unseen('no destination has this id');
    return id;
  };
  const versioned = async (m: RegExpExecArray, req: IncomingMessage) => {
    const { writer, current } = catalog();
    const id = changeable(m, req);
    const expectedVersion = ifMatch(req);
    const { body, ...by } = await change(req);
    return {
      writer,
      body,
      before: current().destinations.get(id)?.definition,
      request: { ...by, id, expectedVersion },
    };
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
      ...route('GET', 'listDefinitions', async (_m, url, req) => {
        const query = parseDefinitionsQuery(url.searchParams);
        if (!query.ok) throw badRequest(query);
        return [200, pageDefinitions(visible(req), query.value)];
      }),
      pattern: new RegExp(`^${BASE}$`),
      params: ['sourceId', 'limit', 'cursor'],
    },
    {
      ...route('POST', 'createDefinition', async (_m, _url, req) => {
        const { writer } = catalog();
        const { body: given, ...by } = await change(req);
        const body = inCallerTenant(req, { body: given, form: 'whole' });
        checkUrls(deps.config(), body);
        return settle(await writer.create({ ...by, definition: body }), { before: undefined, by: by.by });
      }),
      pattern: new RegExp(`^${BASE}$`),
    },
    {
      ...route('GET', 'listDefinitionChanges', async (_m, url, req) => {
        const query = parseChangesQuery(url.searchParams, 'destinationId');
        if (!query.ok) throw badRequest(query);
        const ids = callerOf(req).role === 'admin' ? undefined : new Set(visible(req).map((d) => d.id));
        const changes = (await deps.changes.list(query.value)).filter((c) => ids === undefined || ids.has(c.subjectId));
        return [200, { changes: changes.map(({ subjectId, ...c }) => ({ destinationId: subjectId, ...c })) }];
      }),
      pattern: /^\/api\/v1\/destination-changes$/,
      params: ['destinationId', 'limit'],
    },
    route('GET', 'getDefinition', async (m, _url, req) => {
      const id = pathId('destinationId', m[1]!);
      const item = visible(req).find((d) => d.id === id);
      if (!item) throw new HttpError(404, 'not_found', 'no destination has this id');
      return item.origin === 'runtime' ? [200, item, { etag: etagOf(item.version) }] : [200, item];
    }),
    route('PUT', 'replaceDefinition', async (m, _url, req) => {
      const { writer, body: given, before, request } = await versioned(m, req);
      const body = inCallerTenant(req, { body: given, current: tenantOf(before), form: 'whole' });
      checkUrls(deps.config(), body);
      return settle(await writer.replace({ ...request, definition: body }), { before, by: request.by });
    }),
    route('PATCH', 'patchDefinition', async (m, _url, req) => {
      const { writer, body: given, before, request } = await versioned(m, req);
      const body = inCallerTenant(req, { body: given, current: tenantOf(before), form: 'patch' });
      checkUrls(deps.config(), body);
      return settle(await writer.patch({ ...request, patch: body }), { before, by: request.by });
    }),
    route('DELETE', 'deleteDefinition', async (m, _url, req) => {
      const { writer, request } = await versioned(m, req);
      return settle(await writer.delete(request), { before: undefined, by: request.by });
    }),
    {
      ...route('POST', 'rotateDefinitionSecret', async (m, _url, req) => {
        const { writer, body, before, request } = await versioned(m, req);
        return settle(await writer.rotate({ ...request, ...rotateBody(body) }), { before, by: request.by });
      }),
      pattern: new RegExp(`^${BASE}/([^/]+)/rotate-secret$`),
    },
  ];
}

const SCHEMES = ['x-signature', 'standard-webhooks'] as const;

/** The rotate-secret body: `scheme` (default `x-signature`) and `overlapMs` (default 24 h). */
function rotateBody(raw: unknown): { scheme: (typeof SCHEMES)[number]; overlapMs?: number } {
  const body = raw ?? {};
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new HttpError(400, 'invalid_body', 'the body must be a JSON object');
  const { scheme = 'x-signature', overlapMs, ...rest } = body as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined)
    throw new HttpError(400, 'invalid_parameter', `${unknown} is not a field of this route`, unknown);
  if (!SCHEMES.includes(scheme as never))
    throw new HttpError(400, 'invalid_parameter', `scheme must be one of ${SCHEMES.join(', ')}`, 'scheme');
  if (overlapMs !== undefined && typeof overlapMs !== 'number')
    throw new HttpError(400, 'invalid_parameter', 'overlapMs must be a number of milliseconds', 'overlapMs');
  return { scheme: scheme as (typeof SCHEMES)[number], ...(overlapMs !== undefined && { overlapMs }) };
}
