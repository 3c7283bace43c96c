import type { EventEntry } from '../../domain/records.ts';
import type { Sql } from './database.ts';
import { recordset } from './sql-values.ts';
import type { IngestReport } from '../../domain/ingest-report.ts';

/**
 * Deletion requests (`type: 'delete'` events): remembered, and every event of the user in that
 * source received up to the request (with its deliveries and attempts) and every rejected body
 * naming the user are removed, with the dead-letter index rows and replays of those messages. The deletion event itself stays: it is what was delivered.
 */
export async function applyDeletions(tx: Sql, deletions: EventEntry[], report: IngestReport): Promise<void> {
  const rows = recordset(
    deletions.map((d) => ({
      sourceId: d.sourceId,
      userId: d.userId,
      deletionId: d.messageId,
      requestedAt: d.receivedAt,
    })),
  );
  const x = `jsonb_to_recordset($1::text::jsonb)
    as x("sourceId" text, "userId" text, "deletionId" text, "requestedAt" double precision)`;
  await tx.query(
    `insert into deletions (source_id, user_id, deletion_id, requested_at)
     select x."sourceId", x."userId", x."deletionId", to_timestamp(x."requestedAt" / 1000.0) from ${x}
     on conflict do nothing`,
    [rows],
  );
  const [messages] = await tx.query<{ n: number }>(
    `with gone as (
       delete from messages m using ${x}
       where m.source_id = x."sourceId" and m.user_id = x."userId" and m.event_type <> 'delete'
         and m.received_at <= to_timestamp(x."requestedAt" / 1000.0)
       returning m.source_id, m.message_id),
     deliveries_gone as (delete from deliveries d using gone
       where d.source_id = gone.source_id and d.message_id = gone.message_id),
     attempts_gone as (delete from attempts a using gone
       where a.source_id = gone.source_id and a.message_id = gone.message_id),
     dead_letters_gone as (delete from dead_letters l using gone
       where l.source_id = gone.source_id and l.message_id = gone.message_id),
     replays_gone as (delete from replays r using gone
       where r.source_id = gone.source_id and r.message_id = gone.message_id)
     select count(*)::int as n from gone`,
    [rows],
  );
  const [rejections] = await tx.query<{ n: number }>(
    `with gone as (
       delete from rejections r using ${x}
       where r.source_id = x."sourceId" and r.user_id = x."userId" and r.at <= to_timestamp(x."requestedAt" / 1000.0)
       returning 1)
     select count(*)::int as n from gone`,
    [rows],
  );
  report.deleted.messages += Number(messages?.n ?? 0);
  report.deleted.rejections += Number(rejections?.n ?? 0);
}
