import { checkId, checkInt, type Checked } from './query.ts';

/** Changes a page of the audit (`GET /api/v1/destination-changes`, `/source-changes`) holds by default, and at most. */
export const DEFAULT_CHANGES_PAGE = 50;
export const MAX_CHANGES_PAGE = 1_000;

/**
 * One change of a runtime destination or source as the audit keeps it: whose (`subjectId`, the
 * destination's or source's id), the version it made, what it was, who made it and when, and the
 * fields it set (names, never values).
 */
export interface AuditedChange {
  subjectId: string;
  version: number;
  change: string;
  by: string;
  at: string;
  fields: string[];
}

/** What the audit records of a deletion: who, when, its version; no fields. */
export const deletionChange = (deleted: { id: string; version: number }, change: { by: string; at: number }) => ({
  subjectId: deleted.id,
  version: deleted.version,
  change: 'deleted',
  by: change.by,
  at: new Date(change.at).toISOString(),
  fields: [],
});

/** The audit's query: the id (`destinationId` or `sourceId`, as `idParam` names it), `limit` (1–1,000, default 50). */
export function parseChangesQuery(
  params: URLSearchParams,
  idParam: 'destinationId' | 'sourceId',
): Checked<{ limit: number; subjectId?: string }> {
  const subject = checkId(idParam, params.get(idParam));
  if (!subject.ok) return subject;
  const limit = checkInt('limit', params.get('limit'), DEFAULT_CHANGES_PAGE, MAX_CHANGES_PAGE);
  if (!limit.ok) return limit;
  return { ok: true, value: { limit: limit.value, ...(subject.value && { subjectId: subject.value }) } };
}
