import type { SluiceConfig } from '@sluice/config';
import {
  type CatalogEntry,
  type CatalogWriter,
  redactEntry,
  tenantOfDefinition,
  type Written,
} from '@sluice/destination-catalog';
import { AddressPolicy, urlVerdict } from '@sluice/webhook';
import {
  changedFields,
  type DefinitionItem,
  type DefinitionsQuery,
  definitionUrls,
  pageDefinitions,
  parseDefinitionsQuery,
} from '../../domain/definitions.ts';
import { inCallerTenant } from './catalog-http.ts';
import { HttpError, readJson, type Route } from './http-io.ts';
import { DESTINATION_RESOURCE } from './versioned-resource.ts';
import { type ResourceCatalog, type ResourceRouteDeps, versionedRoutes } from './versioned-routes.ts';

/** The catalog as the API changes it: what the service's reader has read, and the writer. */
export type DefinitionCatalog = ResourceCatalog<
  Pick<CatalogWriter, 'create' | 'replace' | 'patch' | 'delete' | 'rotate'>
>;

export type DefinitionRouteDeps = ResourceRouteDeps<DefinitionCatalog['writer']>;

/** The tenant a runtime destination's stored definition names (undefined: none stored, so `default`). */
const tenantOf = (entry: CatalogEntry | undefined): string | undefined =>
  typeof entry?.definition.tenant === 'string' ? entry.definition.tenant : undefined;

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
    items.push({ origin: 'runtime', ...rest, tenant: tenantOfDefinition(entry.definition), sourceIds, definition });
  }
  return items;
}

/**
 * The runtime destinations' routes (docs/reference/runtime-destinations.md, "API"): the list with
 * the file's destinations read-only, and create, read, replace, patch, delete and rotate-secret of
 * the runtime ones, each change compare-and-set by `If-Match`.
 */
export function definitionRoutes(deps: DefinitionRouteDeps): Route[] {
  return versionedRoutes<DefinitionCatalog['writer'], CatalogEntry, Written, DefinitionsQuery>({
    resource: DESTINATION_RESOURCE,
    deps,
    listing: {
      all: () => allDefinitions(deps),
      query: parseDefinitionsQuery,
      page: (all, query) => pageDefinitions(all as DefinitionItem[], query),
      params: ['sourceId', 'limit', 'cursor'],
    },
    entries: (catalog) => catalog.destinations,
    shown: (outcome) => ({ destination: redactEntry(outcome.entry), secrets: outcome.secrets }),
    audited: (outcome, { before }) => ({
      change: outcome.kind,
      fields: changedFields(before?.definition ?? {}, outcome.entry.definition),
    }),
    create: (writer, { body, ...by }) => {
      checkUrls(deps.config(), body);
      return writer.create({ ...by, definition: body });
    },
    remove: (writer, request) => writer.delete(request),
    edits: ({ route, versioned, settle }) => [
      route('PUT', 'replaceDefinition', async (m, _url, req) => {
        const { writer, request, before, actor } = versioned(m, req);
        const body = inCallerTenant(req, { body: await readJson(req), current: tenantOf(before), form: 'whole' });
        checkUrls(deps.config(), body);
        return settle(await writer.replace({ ...request, definition: body }), { before, actor });
      }),
      route('PATCH', 'patchDefinition', async (m, _url, req) => {
        const { writer, request, before, actor } = versioned(m, req);
        const body = inCallerTenant(req, { body: await readJson(req), current: tenantOf(before), form: 'patch' });
        checkUrls(deps.config(), body);
        return settle(await writer.patch({ ...request, patch: body }), { before, actor });
      }),
      {
        ...route('POST', 'rotateDefinitionSecret', async (m, _url, req) => {
          const { writer, request, before, actor } = versioned(m, req);
          const body = await readJson(req);
          return settle(await writer.rotate({ ...request, ...rotateBody(body) }), { before, actor });
        }),
        pattern: new RegExp(`^${DESTINATION_RESOURCE.base}/([^/]+)/rotate-secret$`),
      },
    ],
  });
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
