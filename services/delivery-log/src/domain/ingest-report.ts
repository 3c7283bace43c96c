import type { EventNote } from './event-text.ts';
import type { LogEntry } from './records.ts';

/** Why a record was not stored at all (a metric label; the `unstored` table keeps the database's error). */
export type UnstoredReason = 'database_refused';

/** What writing a batch did besides storing it: the metrics and log lines of the ingestion. */
export interface IngestReport {
  /** One note per event kept as text instead of JSON. */
  keptAsText: EventNote[];
  /** One per record the database refused (kept in the `unstored` table). */
  unstored: { kind: LogEntry['kind']; reason: UnstoredReason }[];
  /** Rows removed by the deletion requests of the batch. */
  deleted: { messages: number; rejections: number };
}

export const emptyReport = (): IngestReport => ({
  keptAsText: [],
  unstored: [],
  deleted: { messages: 0, rejections: 0 },
});
