import type { RecordKind } from '@sluice/destination-catalog';
import type { AuditedChange } from '../../domain/audit.ts';
import type { Sql } from './database.ts';

/** A row of `destination_changes` or `source_changes`, its id column read as `subject_id`. */
interface ChangeRow {
  subject_id: string;
  version: number;
  change: string;
  changed_by: string;
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

/**
 * The audit of the runtime destinations or of the runtime sources in the log's database: one row
 * per change made through the API (docs/reference/runtime-destinations.md, "Audit").
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
      `insert into ${table} (${id}, version, change, changed_by, changed_at, fields)
       values ($1, $2, $3, $4, $5, $6::jsonb) on conflict do nothing`,
      [change.subjectId, change.version, change.change, change.by, change.at, JSON.stringify(change.fields)],
    );
  }

  /** The newest changes first, of one destination (or source) or of all. */
  async list(query: { limit: number; subjectId?: string }): Promise<AuditedChange[]> {
    const { table, id } = this.#table;
    const rows = await this.#sql.query<ChangeRow>(
      `select ${id} as subject_id, version, change, changed_by, changed_at, fields from ${table}
       where $1::text is null or ${id} = $1 order by changed_at desc, version desc limit $2`,
      [query.subjectId ?? null, query.limit],
    );
    return rows.map((r) => ({
      subjectId: r.subject_id,
      version: Number(r.version),
      change: r.change,
      by: r.changed_by,
      at: new Date(r.changed_at).toISOString(),
      fields: typeof r.fields === 'string' ? (JSON.parse(r.fields) as string[]) : r.fields,
    }));
  }
}
