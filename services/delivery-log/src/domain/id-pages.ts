import { cutPage } from './cursor.ts';
import { checkId, checkInt, type Checked, type Invalid } from './query.ts';

/** Items a page of a list by id (destination or source definitions) holds by default, and at most. */
export const DEFAULT_ID_PAGE = 100;
export const MAX_ID_PAGE = 500;

/** A page of a list ordered by id: how many, and the id the previous page ended at. */
export interface IdPageQuery {
  limit: number;
  after?: string;
}

const cursorOf = (id: string) => Buffer.from(id, 'utf8').toString('base64url');

/** `limit` (1–500, default 100) and `cursor` (the previous page's `nextCursor`, opaque). */
export function parseIdPageQuery(params: URLSearchParams): Checked<IdPageQuery> {
  const limit = checkInt('limit', params.get('limit'), DEFAULT_ID_PAGE, MAX_ID_PAGE);
  if (!limit.ok) return limit;
  const raw = params.get('cursor');
  const after = raw === null ? undefined : Buffer.from(raw, 'base64url').toString('utf8');
  if (raw !== null && (after === '' || cursorOf(after!) !== raw || !checkId('cursor', after).ok))
    return { ok: false, field: 'cursor', message: 'is not a cursor this API gave' } satisfies Invalid;
  return { ok: true, value: { limit: limit.value, ...(after && { after }) } };
}

/** One page of `items` by id, after the cursor; `nextCursor` when more follow, else null. */
export function pageById<T extends { id: string }>(
  items: readonly T[],
  query: IdPageQuery,
): { page: T[]; nextCursor: string | null } {
  const { after, limit } = query;
  const matching = items
    .filter((d) => after === undefined || d.id > after)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return cutPage(matching, { limit, cursorOf: (last) => cursorOf(last.id) });
}
