import type { LogEntry } from '../../domain/records.ts';
import { LogReader } from './read-store.ts';
import { logSize, type PruneOptions, pruneBefore } from './retention.ts';
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

  /**
   * Deletes messages received before `before` (epoch ms) with everything kept about them, in
   * batches (`pruneBefore`); returns how many.
   */
  prune(before: number, options?: PruneOptions): Promise<number> {
    return pruneBefore(this.sql, before, options);
  }

  /** Bytes the log's tables take (what `deliveryLog.maxSizeBytes` caps). */
  size(): Promise<number> {
    return logSize(this.sql);
  }
}
