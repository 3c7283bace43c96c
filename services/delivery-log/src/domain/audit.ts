import { decodeTimeCursor } from './cursor.ts';
import { checkId, checkInt, type Checked } from './query.ts';

/** Changes a page of the audit (`GET /api/v1/destination-changes`, `/source-changes`) holds by default, and at most. */
export const DEFAULT_CHANGES_PAGE = 50;
export const MAX_CHANGES_PAGE = 1_000;

/** Who made a change or an action: the token's name, and its id (docs/reference/tokens.md, "What is recorded"). */
export interface Actor {
  by: string;
  byTokenId: string;
}

/**
 * One change of a runtime destination or source as the audit keeps it: whose (`subjectId`, the
 * destination's or source's id), the version it made, what it was, who made it (the token's name,
 * and its id: absent on changes recorded before the audit kept it) and when, and the fields it set
 * (names, never values).
 */
export interface AuditedChange {
  subjectId: string;
  version: number;
  change: string;
  by: string;
  byTokenId?: string;
  at: string;
  fields: string[];
}

/** What the audit records of a deletion: who, when, its version; no fields. */
export const deletionChange = (
  deleted: { id: string; version: number },
  change: Actor & { at: number },
): AuditedChange => ({
  subjectId: deleted.id,
  version: deleted.version,
  change: 'deleted',
  by: change.by,
  byTokenId: change.byTokenId,
  at: new Date(change.at).toISOString(),
  fields: [],
});

/** A page of the audit: how many, of one destination (or source) or of all, after the previous page's last change. */
export interface ChangesQuery {
  limit: number;
  subjectId?: string;
  after?: { at: number; subjectId: string; version: number };
}

/**
 * The audit's query: the id (`destinationId` or `sourceId`, as `idParam` names it), `limit`
 * (1–1,000, default 50) and `cursor` (the previous page's `nextCursor`).
 */
export function parseChangesQuery(
  params: URLSearchParams,
  idParam: 'destinationId' | 'sourceId',
): Checked<ChangesQuery> {
  const subject = checkId(idParam, params.get(idParam));
  if (!subject.ok) return subject;
  const limit = checkInt('limit', params.get('limit'), DEFAULT_CHANGES_PAGE, MAX_CHANGES_PAGE);
  if (!limit.ok) return limit;
  const raw = params.get('cursor');
  const cursor = raw === null ? undefined : decodeTimeCursor(raw, 2);
  const version = Number(cursor?.keys[1]);
  // A version as its integer column holds it: a forged one is a 400, never a statement refused.
  const wholeVersion = Number.isInteger(version) && version >= 0 && version <= 2_147_483_647;
  if (raw !== null && (cursor === undefined || !checkId('cursor', cursor.keys[0]!).ok || !wholeVersion))
    return { ok: false, field: 'cursor', message: 'is not a cursor this API returned' };
  return {
    ok: true,
    value: {
      limit: limit.value,
      ...(subject.value && { subjectId: subject.value }),
      ...(cursor !== undefined && { after: { at: cursor.at, subjectId: cursor.keys[0]!, version } }),
    },
  };
}
