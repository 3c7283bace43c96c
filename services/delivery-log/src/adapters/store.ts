import type { LogEntry } from '../domain/records.ts';
import { LogReader } from './read-store.ts';
import { iso } from './sql-values.ts';
import { type IngestReport, ingestEntries } from './store-write.ts';

export { NO_DESTINATION } from './sql-values.ts';

/**
 * The log's tables (docs/delivery-log.md): the write path is `store-write.ts`, the read path
 * `read-store.ts`. One instance per database.
 */
export class LogStore extends LogReader {
  /** Writes what a batch of records says; never fails for one record's data (`ingestEntries`). */
  ingest(entries: readonly LogEntry[]): Promise<IngestReport> {
    return ingestEntries(this.sql, entries);
  }

  /** Deletes messages received before `before` (epoch ms) with everything kept about them; returns how many. */
  async prune(before: number): Promise<number> {
    return this.sql.transaction(async (tx) => {
      const cut = iso(before);
      const gone = await tx.query<{ source_id: string; message_id: string }>(
        'delete from messages where received_at < $1 returning source_id, message_id',
        [cut],
      );
      await tx.query('delete from deliveries where received_at < $1', [cut]);
      await tx.query('delete from attempts where at < $1', [cut]);
      await tx.query('delete from rejections where at < $1', [cut]);
      await tx.query('delete from replays where requested_at < $1', [cut]);
      await tx.query('delete from dead_letters where kept_at < $1', [cut]);
      await tx.query('delete from unstored where at < $1', [cut]);
      await tx.query('delete from deletions where requested_at < $1', [cut]);
      return gone.length;
    });
  }
}
