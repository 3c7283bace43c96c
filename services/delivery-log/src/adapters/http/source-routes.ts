import { type CatalogWriter, type SourceEntry, type SourceWritten, showSource } from '@sluice/destination-catalog';
import type { SourceItem } from '@sluice/log-api';
import { type IdPageQuery, pageById, parseIdPageQuery } from '../../domain/id-pages.ts';
import { sourceChangeOf } from '../../domain/sources.ts';
import { HttpError, pathId, readJson, type Route } from './http-io.ts';
import { SOURCE_RESOURCE } from './versioned-resource.ts';
import { type ResourceCatalog, type ResourceRouteDeps, versionedRoutes } from './versioned-routes.ts';

/** The catalog as the source routes change it: what the service's reader has read, and the writer. */
export type SourceCatalog = ResourceCatalog<
  Pick<CatalogWriter, 'createSource' | 'renameSource' | 'deleteSource' | 'mintWriteKey' | 'revokeWriteKey'>
>;

/** What the source routes are given; the file's sources are listed without their keys. */
export type SourceRouteDeps = ResourceRouteDeps<SourceCatalog['writer']>;

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
  return versionedRoutes<SourceCatalog['writer'], SourceEntry, SourceWritten, IdPageQuery>({
    resource: SOURCE_RESOURCE,
    deps,
    listing: {
      all: () => allSources(deps),
      query: parseIdPageQuery,
      page: (all, query) => {
        const { page, nextCursor } = pageById(all, query);
        return { sources: page, nextCursor };
      },
      params: ['limit', 'cursor'],
    },
    entries: (catalog) => catalog.sources,
    shown: (outcome) => ({
      source: showSource(outcome.entry),
      ...(outcome.writeKey && { writeKey: outcome.writeKey }),
    }),
    audited: (outcome, { before }) => sourceChangeOf(outcome, { before: before?.definition.writeKeys ?? [] }),
    create: (writer, { body, ...by }) => writer.createSource({ ...by, source: body }),
    remove: (writer, request) => writer.deleteSource(request),
    edits: ({ route, versioned, settle }) => [
      route('PATCH', 'renameSource', async (m, _url, req) => {
        const { writer, request, before, actor } = versioned(m, req);
        const { name } = renameBody(await readJson(req));
        return settle(await writer.renameSource({ ...request, name }), { before, actor });
      }),
      {
        ...route('POST', 'mintWriteKey', async (m, _url, req) => {
          const { writer, request, before, actor } = versioned(m, req);
          return settle(await writer.mintWriteKey(request), { before, actor });
        }),
        pattern: new RegExp(`^${SOURCE_RESOURCE.base}/([^/]+)/write-keys$`),
      },
      {
        ...route('DELETE', 'revokeWriteKey', async (m, _url, req) => {
          const { writer, request, before, actor } = versioned(m, req);
          const keyId = pathId('keyId', m[2]!);
          return settle(await writer.revokeWriteKey({ ...request, keyId }), { before, actor });
        }),
        pattern: new RegExp(`^${SOURCE_RESOURCE.base}/([^/]+)/write-keys/([^/]+)$`),
      },
    ],
  });
}
