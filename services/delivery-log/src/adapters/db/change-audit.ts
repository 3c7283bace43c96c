import type { RecordKind } from '@sluice/destination-catalog';
import type { AuditedChange, ChangesQuery } from '../../domain/audit.ts';
import { cutPage, encodeTimeCursor } from '../../domain/cursor.ts';
import type { Sql } from './database.ts';
import { iso, ms } from './sql-values.ts';

/** A row of `destination_changes` or `source_changes`, its id column read as `subject_id`. */
interface ChangeRow {
  subject_id: string;
  version: number;
  change: string;
  changed_by: string;
  changed_by_token_id: string | null;
  changed_at: string | Date;
  fields: string[] | string;
}

/** What the audit keeps changes of: runtime destinations and runtime sources (tokens are listed by the catalog itself). */
type AuditedKind = Exclude<RecordKind, 'token'>;

/** Each kind's table and id column (constants: never from a request). */
const TABLES = {
  destination: { table: 'destination_changes', id: 'destination_id' },
  source: { table: 'source_changes', id: 'source_id' },
} as const satisfies Record<AuditedKind, { table: string; id: string }>;

/** A page of the audit, newest first, and the cursor of the next (null: none follows). */
export interface ChangesPage {
  changes: AuditedChange[];
  nextCursor: string | null;
}

const changeOf = (r: ChangeRow): AuditedChange => ({
  subjectId: r.subject_id,
  version: Number(r.version),
  change: r.change,
  by: r.changed_by,
  ...(r.changed_by_token_id !== null && { byTokenId: r.changed_by_token_id }),
  at: new Date(r.changed_at).toISOString(),
  fields: typeof r.fields === 'string' ? (JSON.parse(r.fields) as string[]) : r.fields,
});

/**
 * The audit of the runtime destinations or of the runtime sources in the log's database: one row
 * per change made through the API (docs/reference/runtime-destinations.md, "Audit"), pruned with
 * the log (retention.ts).
 */
export class ChangeAudit {
  readonly #sql: Sql;
  readonly #table: (typeof TABLES)[AuditedKind];

  constructor(sql: Sql, kind: AuditedKind) {
    this.#sql = sql;
    this.#table = TABLES[kind];
  }

  async record(change: AuditedChange): Promise<void> {
    const { table, id } = this.#table;
    await this.#sql.query(
      `insert into ${table} (${id}, version, change, changed_by, changed_by_token_id, changed_at, fields)
       values ($1, $2, $3, $4, $5, $6, $7::jsonb) on conflict do nothing`,
      [
        change.subjectId,
        change.version,
        change.change,
        change.by,
        change.byTokenId ?? null,
        change.at,
        JSON.stringify(change.fields),
      ],
    );
  }

  /**
   * The newest changes first, after the cursor: of one destination (or source) or of all, and of
   * those `subjectIds` only when given (a tenant's), filtered in the statement so that a page is
   * full whenever more rows follow.
   */
  async list(query: ChangesQuery & { subjectIds?: readonly string[] }): Promise<ChangesPage> {
    const { table, id } = this.#table;
    const after = query.after;
    const rows = await this.#sql.query<ChangeRow>(
      `select ${id} as subject_id, version, change, changed_by, changed_by_token_id, changed_at, fields from ${table}
       where ($1::text is null or ${id} = $1)
         and ($2::text[] is null or ${id} = any ($2::text[]))
         and ($3::timestamptz is null or (changed_at, ${id}, version) < ($3::timestamptz, $4::text, $5::integer))
       order by changed_at desc, ${id} desc, version desc limit $6`,
      [
        query.subjectId ?? null,
        query.subjectIds === undefined ? null : [...query.subjectIds],
        after === undefined ? null : iso(after.at),
        after?.subjectId ?? null,
        after?.version ?? null,
        query.limit + 1,
      ],
    );
    const { page, nextCursor } = cutPage(rows, {
      limit: query.limit,
      cursorOf: (last) => encodeTimeCursor({ at: ms(last.changed_at), keys: [last.subject_id, String(last.version)] }),
    });
    return { changes: page.map(changeOf), nextCursor };
  }
}
