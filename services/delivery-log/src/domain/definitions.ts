import type { Definition } from '@sluice/log-api';
import { checkId, checkInt, type Checked, type Invalid } from './query.ts';

/** Definitions a page of `GET /api/v1/destination-definitions` holds by default, and at most. */
export const DEFAULT_DEFINITIONS_PAGE = 100;
export const MAX_DEFINITIONS_PAGE = 500;

/** A destination as the definitions list shows it, file-declared (read-only) or runtime: typed in `@sluice/log-api`. */
export type DefinitionItem = Definition;

export interface DefinitionsQuery {
  sourceId?: string;
  limit: number;
  /** The id the previous page ended at. */
  after?: string;
}

/** The ETag of a runtime destination's version: strong, the version in quotes. */
export const etagOf = (version: number) => `"${version}"`;

/**
 * The version an `If-Match` header expects: `"<version>"` (an ETag this API gave) or the bare
 * number; undefined when the header is missing (428), invalid for anything else (a list, `*`, a
 * weak tag: a change must name the one version it was made on).
 */
export function expectedVersion(header: string | undefined): Checked<number> | undefined {
  if (header === undefined) return undefined;
  const m = /^\s*(?:"(\d{1,15})"|(\d{1,15}))\s*$/.exec(header);
  if (!m)
    return { ok: false, field: 'If-Match', message: 'must be the ETag of the version the change is made on ("3")' };
  return { ok: true, value: Number(m[1] ?? m[2]) };
}

const cursorOf = (id: string) => Buffer.from(id, 'utf8').toString('base64url');

/** The list query: `sourceId`, `limit` (1–500, default 100), `cursor` (from the previous page's `nextCursor`). */
export function parseDefinitionsQuery(params: URLSearchParams): Checked<DefinitionsQuery> {
  const source = checkId('sourceId', params.get('sourceId'));
  if (!source.ok) return source;
  const limit = checkInt('limit', params.get('limit'), DEFAULT_DEFINITIONS_PAGE, MAX_DEFINITIONS_PAGE);
  if (!limit.ok) return limit;
  const raw = params.get('cursor');
  const after = raw === null ? undefined : Buffer.from(raw, 'base64url').toString('utf8');
  if (raw !== null && (after === '' || cursorOf(after!) !== raw || !checkId('cursor', after).ok))
    return { ok: false, field: 'cursor', message: 'is not a cursor this API gave' } satisfies Invalid;
  return {
    ok: true,
    value: { limit: limit.value, ...(source.value && { sourceId: source.value }), ...(after && { after }) },
  };
}

/**
 * One page of definitions by id: those of the source asked for (a destination with no `sourceIds`
 * takes every source), after the cursor; `nextCursor` when more follow.
 */
export function pageDefinitions(
  items: readonly DefinitionItem[],
  query: DefinitionsQuery,
): { definitions: DefinitionItem[]; nextCursor: string | null } {
  const { sourceId, after, limit } = query;
  const matching = items
    .filter((d) => sourceId === undefined || d.sourceIds.length === 0 || d.sourceIds.includes(sourceId))
    .filter((d) => after === undefined || d.id > after)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const definitions = matching.slice(0, limit);
  const more = matching.length > limit;
  return { definitions, nextCursor: more ? cursorOf(definitions.at(-1)!.id) : null };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The URLs a definition (or a merge patch of one) gives, each with its field: `webhookUrl` and each endpoint's `url`. */
export function definitionUrls(body: unknown): { field: string; url: string }[] {
  const settings = isObject(body) && isObject(body.settings) ? body.settings : {};
  const urls: { field: string; url: string }[] = [];
  if (typeof settings.webhookUrl === 'string') urls.push({ field: 'settings.webhookUrl', url: settings.webhookUrl });
  if (Array.isArray(settings.webhooks))
    settings.webhooks.forEach((e, i) => {
      if (isObject(e) && typeof e.url === 'string') urls.push({ field: `settings.webhooks[${i}].url`, url: e.url });
    });
  return urls;
}
