import { PRUNE_BATCH_ROWS } from '../../constants.ts';
import type { Sql } from './database.ts';
import { iso, ms } from './sql-values.ts';

/**
 * Retention of the log's tables (docs/delivery-log.md, "Retention"): deletions in small batches on
 * the indexed time column of each table, each batch its own short transaction, so ingestion goes
 * on between them; and the tables' size, which the size cap is checked against.
 */

/** Each table with the time column it is pruned by (each has an index that starts with it). */
const TIMED_TABLES = [
  ['messages', 'received_at'],
  ['deliveries', 'received_at'],
  ['attempts', 'at'],
  ['rejections', 'at'],
  ['replays', 'requested_at'],
  ['dead_letters', 'kept_at'],
  ['unstored', 'at'],
  ['deletions', 'requested_at'],
  // The audit: actions on destinations and changes of runtime destinations and sources, kept as long as the log.
  ['destination_actions', 'at'],
  ['destination_changes', 'changed_at'],
  ['source_changes', 'changed_at'],
] as const;

/** Every table that holds records of the log (their size is the log's size). */
export const LOG_TABLES = TIMED_TABLES.map(([table]) => table);

export interface PruneOptions {
  /** Rows per statement and table; default `PRUNE_BATCH_ROWS`. */
  batchRows?: number;
  /**
   * After each batch, wait this many times as long as the batch took (0: none). Pruning by age
   * waits `PRUNE_PAUSE_RATIO` so that ingestion keeps most of the database; eviction does not wait
   * (it must keep up with ingestion).
   */
  pauseRatio?: number;
}

/**
 * Deletes every row older than `before` (epoch ms), in batches of rows per statement and table;
 * returns the messages deleted. Between batches the event loop runs (ingestion's transactions
 * interleave: the embedded database runs one statement at a time).
 */
export async function pruneBefore(sql: Sql, before: number, options: PruneOptions = {}): Promise<number> {
  const batchRows = options.batchRows ?? PRUNE_BATCH_ROWS;
  const pauseRatio = options.pauseRatio ?? 0;
  const cut = iso(before);
  let messages = 0;
  for (const [table, column] of TIMED_TABLES) {
    for (;;) {
      const started = performance.now();
      const [row] = await sql.query<{ n: number }>(
        `with gone as (
           delete from ${table} where ctid = any (array(
             select ctid from ${table} where ${column} < $1 order by ${column} limit $2))
           returning 1)
         select count(*)::int as n from gone`,
        [cut, batchRows],
      );
      const n = Number(row?.n ?? 0);
      if (table === 'messages') messages += n;
      if (n < batchRows) break;
      const pause = (performance.now() - started) * pauseRatio;
      await new Promise((resolve) => (pause > 0 ? setTimeout(resolve, pause) : setImmediate(resolve)));
    }
  }
  return messages;
}

/** Bytes the log's tables take, their indexes and out-of-line values included. */
export async function logSize(sql: Sql): Promise<number> {
  const [row] = await sql.query<{ bytes: string | number }>(
    `select coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint::text as bytes from pg_class c
     join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = current_schema() and c.relkind = 'r' and c.relname = any ($1::text[])`,
    [LOG_TABLES],
  );
  return Number(row?.bytes ?? 0);
}

/** Messages in the log. */
export async function messageCount(sql: Sql): Promise<number> {
  const [row] = await sql.query<{ n: number }>('select count(*)::int as n from messages');
  return Number(row?.n ?? 0);
}

/**
 * The receive time before which the oldest `n` of the `total` messages lie (epoch ms): pruning
 * before it deletes them.
 */
export async function oldestCut(sql: Sql, n: number, total: number): Promise<number> {
  if (n >= total) {
    const [newest] = await sql.query<{ at: unknown }>('select max(received_at) as at from messages');
    return ms(newest?.at) + 1;
  }
  const [row] = await sql.query<{ at: unknown }>(
    'select received_at as at from messages order by received_at offset $1 limit 1',
    [n],
  );
  return ms(row?.at);
}

/**
 * Makes the space of deleted rows reusable. The embedded database has no autovacuum: without this
 * its files keep every deleted row's space. PostgreSQL's autovacuum does it too, later.
 */
export async function reclaim(sql: Sql): Promise<void> {
  for (const table of LOG_TABLES) await sql.query(`vacuum ${table}`);
}
