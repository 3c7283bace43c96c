import type { Sql } from './database.ts';

/** Values as the log's SQL statements write and read them (both databases). */

/** Destination id of the row that holds a message-level rejection (no destination was reached). */
export const NO_DESTINATION = '';

/** A row as a driver returns it. */
export type Row = Record<string, unknown>;

/** Epoch ms as the timestamp text the statements take. */
export const iso = (ms: number) => new Date(ms).toISOString();

/** A timestamp column (a Date from one driver, a text from the other) as epoch ms. */
export const ms = (v: unknown) => (v instanceof Date ? v.getTime() : Date.parse(String(v)));

/**
 * Runs `text` (a statement that returns rows) and takes its rows back as one JSON text: the
 * embedded database's client then decodes one field per statement, not one per column and row.
 */
export async function rowsAsJson<T>(tx: Sql, text: string, params: unknown[]): Promise<T[]> {
  const [result] = await tx.query<{ rows: string }>(
    `with w as (${text}) select coalesce(json_agg(w), '[]')::text as rows from w`,
    params,
  );
  return JSON.parse(result!.rows) as T[];
}

/**
 * `column` is one of a list of ids given as one parameter (`param`, `$n`, bound to `idList(ids)`):
 * how a tenant's sources or destinations filter a list in its query, on both databases.
 */
export const oneOf = (column: string, param: string) =>
  `${column} in (select jsonb_array_elements_text(${param}::text::jsonb))`;

/** A list of ids as the parameter `oneOf` reads. */
export const idList = (ids: readonly string[]) => JSON.stringify(ids);

/** A set of rows as one parameter (`jsonb_to_recordset($n::text::jsonb)`): one statement for a whole batch. */
export const recordset = (rows: readonly object[]) => JSON.stringify(rows);

/**
 * An error the database raised about the data of a statement (SQLSTATE class 22, data exception;
 * 54, program limit exceeded), not about itself: the record is at fault, not the database.
 */
export function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('54'));
}
