import type { Definition } from '@sluice/log-api';
import { DEFAULT_ID_PAGE, type IdPageQuery, MAX_ID_PAGE, pageById, parseIdPageQuery } from './id-pages.ts';
import { checkId, type Checked } from './query.ts';

/** Definitions a page of `GET /api/v1/destination-definitions` holds by default, and at most. */
export const DEFAULT_DEFINITIONS_PAGE = DEFAULT_ID_PAGE;
export const MAX_DEFINITIONS_PAGE = MAX_ID_PAGE;

/** A destination as the definitions list shows it, file-declared (read-only) or runtime: typed in `@sluice/log-api`. */
export type DefinitionItem = Definition;

export interface DefinitionsQuery extends IdPageQuery {
  sourceId?: string;
}

/** The ETag of a runtime destination's or source's version: strong, the version in quotes. */
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

/** The list query: `sourceId`, `limit` (1–500, default 100), `cursor` (from the previous page's `nextCursor`). */
export function parseDefinitionsQuery(params: URLSearchParams): Checked<DefinitionsQuery> {
  const source = checkId('sourceId', params.get('sourceId'));
  if (!source.ok) return source;
  const page = parseIdPageQuery(params);
  if (!page.ok) return page;
  return { ok: true, value: { ...page.value, ...(source.value && { sourceId: source.value }) } };
}

/**
 * One page of definitions by id: those of the source asked for (a destination with no `sourceIds`
 * takes every source), after the cursor; `nextCursor` when more follow.
 */
export function pageDefinitions(
  items: readonly DefinitionItem[],
  query: DefinitionsQuery,
): { definitions: DefinitionItem[]; nextCursor: string | null } {
  const { sourceId } = query;
  const matching = items.filter(
    (d) => sourceId === undefined || d.sourceIds.length === 0 || d.sourceIds.includes(sourceId),
  );
  const { page, nextCursor } = pageById(matching, query);
  return { definitions: page, nextCursor };
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

/**
 * The fields two definitions differ in, as dotted paths of their leaves (`settings.webhooks[0].url`):
 * what the audit records of a change. Only names, so a changed secret is recorded as changed, never shown.
 */
export function changedFields(before: unknown, after: unknown, field = ''): string[] {
  const at = (key: string | number) =>
    typeof key === 'number' ? `${field}[${key}]` : field === '' ? key : `${field}.${key}`;
  if (Array.isArray(before) && Array.isArray(after)) {
    const length = Math.max(before.length, after.length);
    return Array.from({ length }, (_, i) => changedFields(before[i], after[i], at(i))).flat();
  }
  // A member added or removed: each of its leaves is named.
  if ((isObject(before) || before === undefined) && (isObject(after) || after === undefined) && before !== after) {
    const [from, to] = [before ?? {}, after ?? {}] as Record<string, unknown>[];
    const keys = [...new Set([...Object.keys(from!), ...Object.keys(to!)])].sort();
    return keys.flatMap((k) => changedFields(from![k], to![k], at(k)));
  }
  if (isObject(before) || isObject(after) || Array.isArray(before) || Array.isArray(after))
    return JSON.stringify(before) === JSON.stringify(after) ? [] : [field || '(root)'];
  return before === after ? [] : [field || '(root)'];
}
