import type { DefinitionChange } from '../../domain/definitions.ts';
import type { Sql } from './database.ts';

/** A row of `destination_changes`. */
interface ChangeRow {
  destination_id: string;
  version: number;
  change: DefinitionChange['change'];
  changed_by: string;
  changed_at: string | Date;
  fields: string[] | string;
}

/** The runtime destinations' audit in the log's database: one row per change made through the API. */
export class DefinitionChanges {
  readonly #sql: Sql;

  constructor(sql: Sql) {
    this.#sql = sql;
  }

  async record(change: DefinitionChange): Promise<void> {
    await this.#sql.query(
      `insert into destination_changes (destination_id, version, change, changed_by, changed_at, fields)
       values ($1, $2, $3, $4, $5, $6::jsonb) on conflict do nothing`,
      [change.destinationId, change.version, change.change, change.by, change.at, JSON.stringify(change.fields)],
    );
  }

  /** The newest changes first, of one destination or of all. */
  async list(query: { limit: number; destinationId?: string }): Promise<DefinitionChange[]> {
    const rows = await this.#sql.query<ChangeRow>(
      `select destination_id, version, change, changed_by, changed_at, fields from destination_changes
       where $1::text is null or destination_id = $1 order by changed_at desc, version desc limit $2`,
      [query.destinationId ?? null, query.limit],
    );
    return rows.map((r) => ({
      destinationId: r.destination_id,
      version: Number(r.version),
      change: r.change,
      by: r.changed_by,
      at: new Date(r.changed_at).toISOString(),
      fields: typeof r.fields === 'string' ? (JSON.parse(r.fields) as string[]) : r.fields,
    }));
  }
}
