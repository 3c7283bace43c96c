import { MAX_TEXT_LENGTH } from '../../constants.ts';
import { type EventNote, type StoredEvent, storedEvent } from '../../domain/event-text.ts';
import { foldDeliveries } from '../../domain/fold.ts';
import { messageKey, positionKey } from '../../domain/keys.ts';
import type {
  AttemptEntry,
  DeadEntry,
  EventEntry,
  FilteredEntry,
  LogEntry,
  RejectedEntry,
  WaitingEntry,
} from '../../domain/records.ts';
import { storableText } from '../../domain/storable-text.ts';
import { applyDeletions } from './deletions.ts';
import { emptyReport, type IngestReport } from '../../domain/ingest-report.ts';
import { readDeliveries, writeDeliveries } from './delivery-rows.ts';
import type { Sql } from './database.ts';
import { isDataError, ms, NO_DESTINATION, recordset, rowsAsJson } from './sql-values.ts';

export type { IngestReport, UnstoredReason } from '../../domain/ingest-report.ts';

/** Key of the advisory lock that orders deletions against event writes on PostgreSQL. */
const DELETION_LOCK = 0x51_d1_0c;

/**
 * Writes what a batch of records says (docs/delivery-log.md, "Ingestion"), in one transaction of a
 * few set-based statements. No record can fail the others: when the database refuses the batch's
 * data, each record is written alone, an event the JSON type refuses is kept as text (then as a
 * bare message row), and any other refused record is kept in `unstored` with the database's error.
 * Any other failure (the database is down) is thrown: nothing is lost, the records are read again.
 */
export async function ingestEntries(sql: Sql, entries: readonly LogEntry[]): Promise<IngestReport> {
  if (entries.length === 0) return emptyReport();
  try {
    const report = emptyReport();
    await sql.transaction((tx) => writeBatch(tx, entries, report));
    return report;
  } catch (err) {
    if (!isDataError(err)) throw err;
  }
  const report = emptyReport();
  for (const entry of entries) await writeAlone(sql, entry, report);
  return report;
}

/** One record in its own transaction, falling back as `ingestEntries` says. */
async function writeAlone(sql: Sql, entry: LogEntry, report: IngestReport): Promise<void> {
  const fallbacks: (StoredEvent | undefined)[] =
    entry.kind === 'event'
      ? [undefined, { text: entry.event, note: 'database_refused' }, { text: null, note: 'unstorable' }]
      : [undefined];
  let error: unknown;
  for (const stored of fallbacks) {
    const attempt = emptyReport();
    try {
      await sql.transaction((tx) => writeBatch(tx, [entry], attempt, stored));
      report.keptAsText.push(...attempt.keptAsText);
      report.deleted.messages += attempt.deleted.messages;
      report.deleted.rejections += attempt.deleted.rejections;
      return;
    } catch (err) {
      if (!isDataError(err)) throw err;
      error = err;
    }
  }
  // The message row too, so the record is findable through the API (its view lists `unstored`).
  const at = entry.kind === 'event' ? entry.receivedAt : entry.at;
  await sql.transaction(async (tx) => {
    await tx.query(
      `insert into messages (source_id, message_id, received_at) values ($1, $2, to_timestamp($3 / 1000.0))
       on conflict (source_id, message_id) do nothing`,
      [entry.sourceId, entry.messageId, at],
    );
    await tx.query('insert into unstored (kind, source_id, message_id, reason, error) values ($1, $2, $3, $4, $5)', [
      entry.kind,
      entry.sourceId,
      entry.messageId,
      'database_refused',
      storableText(String((error as Error).message)).slice(0, MAX_TEXT_LENGTH),
    ]);
  });
  report.unstored.push({ kind: entry.kind, reason: 'database_refused' });
}

/**
 * The batch in one transaction. Idempotent: attempts and rejections are keyed by their place in
 * their topic, events by message, and states only move forward, so writing a batch again changes
 * nothing. `forced` replaces how the (only) event is stored.
 */
async function writeBatch(
  tx: Sql,
  entries: readonly LogEntry[],
  report: IngestReport,
  forced?: StoredEvent,
): Promise<void> {
  const events = new Map<string, EventEntry>();
  const attempts = new Map<string, AttemptEntry>();
  const rejections = new Map<string, RejectedEntry>();
  const deaths: DeadEntry[] = [];
  const filtered: FilteredEntry[] = [];
  const waiting: WaitingEntry[] = [];
  for (const e of entries) {
    if (e.kind === 'event') events.set(messageKey(e), events.get(messageKey(e)) ?? e);
    else if (e.kind === 'attempt') attempts.set(positionKey(e.position), e);
    else if (e.kind === 'rejected') rejections.set(positionKey(e.position), e);
    else if (e.kind === 'filtered') filtered.push(e);
    else if (e.kind === 'waiting') waiting.push(e);
    else deaths.push(e);
  }
  const deletions = [...events.values()].filter((e) => e.eventType === 'delete' && e.userId !== undefined);
  // A deletion waits for the event writes in flight (and they for it): none of them can keep an
  // event of the user it has not seen yet. The embedded database runs one transaction at a time.
  if (tx.kind === 'postgres' && (events.size > 0 || rejections.size > 0))
    await tx.query(`select ${deletions.length > 0 ? 'pg_advisory_xact_lock' : 'pg_advisory_xact_lock_shared'}($1)`, [
      DELETION_LOCK,
    ]);
  const stored = await writeEvents(tx, [...events.values()], report, forced);
  const newAttempts = await writeAttempts(tx, [...attempts.values()]);
  const newRejections = await writeRejections(tx, [...rejections.values()]);
  const messages = await ensureMessages(
    tx,
    [...newAttempts, ...deaths, ...filtered, ...waiting, ...newRejections],
    stored,
  );
  const touched = new Set<string>(stored.completed.keys());
  for (const f of [...newAttempts, ...deaths, ...filtered, ...waiting])
    if (messages.existed.has(messageKey(f))) touched.add(messageKey(f));
  const writes = foldDeliveries({
    current: await readDeliveries(tx, touched),
    events: [...stored.inserted.values(), ...stored.completed.values()],
    attempts: newAttempts,
    deaths,
    filtered,
    waiting,
    receivedAt: messages.receivedAt,
  });
  await writeDeliveries(tx, writes);
  await writeRejectionStates(tx, newRejections, messages.receivedAt);
  if (deletions.length > 0) await applyDeletions(tx, deletions, report);
}

/** Events a batch stored, by message: `inserted` made their message row, `completed` filled in one made from attempts. */
interface StoredEvents {
  inserted: Map<string, EventEntry>;
  completed: Map<string, EventEntry>;
}

/**
 * Events: the event fixes its message's receive time; it is kept as JSON, or as flagged text when
 * the JSON type would refuse it or blow it up (`storedEvent`). An event of a user whose deletion
 * the log has already read, received before that deletion, is not kept.
 */
async function writeEvents(
  tx: Sql,
  events: EventEntry[],
  report: IngestReport,
  forced: StoredEvent | undefined,
): Promise<StoredEvents> {
  const stored: StoredEvents = { inserted: new Map(), completed: new Map() };
  if (events.length === 0) return stored;
  const notes = new Map<string, EventNote>();
  const rows = events.map((e) => {
    const how = forced ?? storedEvent(e.event);
    if ('note' in how) notes.set(messageKey(e), how.note);
    return {
      sourceId: e.sourceId,
      messageId: e.messageId,
      eventType: e.eventType,
      receivedAt: e.receivedAt,
      json: 'json' in how ? how.json : null,
      body: 'text' in how ? how.text : null,
      note: 'note' in how ? how.note : null,
      userId: e.userId ?? null,
      traceId: e.traceId ?? null,
    };
  });
  const written = await rowsAsJson<{ source_id: string; message_id: string; inserted: boolean }>(
    tx,
    `insert into messages (source_id, message_id, event_type, received_at, event, event_text, event_note, user_id,
       trace_id)
     select x."sourceId", x."messageId", x."eventType", to_timestamp(x."receivedAt" / 1000.0), x.json::jsonb, x.body,
       x.note, x."userId", x."traceId"
     from jsonb_to_recordset($1::text::jsonb) as x("sourceId" text, "messageId" text, "eventType" text,
       "receivedAt" double precision, json text, body text, note text, "userId" text, "traceId" text)
     where x."userId" is null or x."eventType" = 'delete' or not exists (select 1 from deletions d
       where d.source_id = x."sourceId" and d.user_id = x."userId"
         and d.requested_at >= to_timestamp(x."receivedAt" / 1000.0))
     on conflict (source_id, message_id) do update set event = excluded.event, event_text = excluded.event_text,
       event_note = excluded.event_note, user_id = excluded.user_id, event_type = excluded.event_type,
       received_at = excluded.received_at, trace_id = excluded.trace_id
     where messages.event is null and messages.event_note is null
     returning source_id, message_id, (xmax = 0) as inserted`,
    [recordset(rows)],
  );
  const byKey = new Map(events.map((e) => [messageKey(e), e]));
  for (const r of written) {
    const k = messageKey({ sourceId: r.source_id, messageId: r.message_id });
    (r.inserted ? stored.inserted : stored.completed).set(k, byKey.get(k)!);
    const note = notes.get(k);
    if (note !== undefined) report.keptAsText.push(note);
  }
  return stored;
}

type PositionRow = { topic: string; partition: number; record_offset: string | number | bigint };

/**
 * Inserts records keyed by their place in their topic with `statement` (its `$1` the rows, it
 * returns the positions it inserted); returns the records not seen before.
 */
async function insertNew<T extends AttemptEntry | RejectedEntry>(
  tx: Sql,
  statement: string,
  records: T[],
  row: (record: T) => object,
): Promise<T[]> {
  if (records.length === 0) return [];
  const rows = await rowsAsJson<PositionRow>(
    tx,
    `${statement} on conflict do nothing returning topic, partition, record_offset::text as record_offset`,
    [recordset(records.map((r) => ({ ...r.position, ...row(r) })))],
  );
  const inserted = new Set(
    rows.map((r) => positionKey({ topic: r.topic, partition: r.partition, offset: String(r.record_offset) })),
  );
  return records.filter((r) => inserted.has(positionKey(r.position)));
}

/** Inserts the attempts; returns those not seen before. */
const writeAttempts = (tx: Sql, attempts: AttemptEntry[]) =>
  insertNew(
    tx,
    `insert into attempts (topic, partition, record_offset, source_id, message_id, destination_id, endpoint, attempt, at,
       outcome, status, error, latency_ms, response_snippet, batch_id, batch_size)
     select x.topic, x.partition, x."offset"::bigint, x."sourceId", x."messageId", x."destinationId", x.endpoint,
       x.attempt, to_timestamp(x.at / 1000.0), x.outcome, x.status, x.error, x."latencyMs", x."responseSnippet",
       x."batchId", x."batchSize"
     from jsonb_to_recordset($1::text::jsonb) as x(topic text, partition int, "offset" text, "sourceId" text,
       "messageId" text, "destinationId" text, endpoint text, attempt int, at double precision, outcome text,
       status int, error text, "latencyMs" double precision, "responseSnippet" text, "batchId" text, "batchSize" int)`,
    attempts,
    (a) => ({
      sourceId: a.sourceId,
      messageId: a.messageId,
      destinationId: a.destinationId,
      endpoint: a.endpoint,
      attempt: a.attempt,
      at: a.at,
      outcome: a.outcome,
      status: a.status ?? null,
      error: a.error ?? null,
      latencyMs: a.latencyMs,
      responseSnippet: a.responseSnippet ?? null,
      batchId: a.batchId ?? null,
      batchSize: a.batchSize ?? null,
    }),
  );

/** Inserts the rejections (not those of a user already deleted); returns those not seen before. */
const writeRejections = (tx: Sql, rejections: RejectedEntry[]) =>
  insertNew(
    tx,
    `insert into rejections (topic, partition, record_offset, source_id, message_id, at, value, user_id)
     select x.topic, x.partition, x."offset"::bigint, x."sourceId", x."messageId", to_timestamp(x.at / 1000.0),
       x.value, x."userId"
     from jsonb_to_recordset($1::text::jsonb) as x(topic text, partition int, "offset" text, "sourceId" text,
       "messageId" text, at double precision, value text, "userId" text)
     where x."userId" is null or not exists (select 1 from deletions d
       where d.source_id = x."sourceId" and d.user_id = x."userId" and d.requested_at >= to_timestamp(x.at / 1000.0))`,
    rejections,
    (r) => ({
      sourceId: r.sourceId,
      messageId: r.messageId,
      at: r.at,
      value: r.value ?? null,
      userId: r.userId ?? null,
    }),
  );

/** Receive time of the messages a batch is about, and which of them existed before the batch. */
interface FactMessages {
  receivedAt: Map<string, number>;
  existed: Set<string>;
}

/**
 * The receive time of every message the batch's facts are about, making a message row for
 * facts read before (or without) their event; and which of those messages existed before this
 * batch (only those can have delivery rows already).
 */
async function ensureMessages(
  tx: Sql,
  facts: (AttemptEntry | DeadEntry | FilteredEntry | WaitingEntry | RejectedEntry)[],
  stored: StoredEvents,
): Promise<FactMessages> {
  const receivedAt = new Map<string, number>();
  const existed = new Set<string>();
  for (const [k, e] of stored.inserted) receivedAt.set(k, e.receivedAt);
  for (const [k, e] of stored.completed) {
    receivedAt.set(k, e.receivedAt);
    existed.add(k);
  }
  const earliest = new Map<string, { sourceId: string; messageId: string; eventType: string; receivedAt: number }>();
  for (const f of facts) {
    const k = messageKey(f);
    if (receivedAt.has(k)) continue;
    const at = f.kind === 'dead' ? (f.receivedAt ?? f.at) : f.at;
    const seen = earliest.get(k);
    if (!seen || at < seen.receivedAt)
      earliest.set(k, {
        sourceId: f.sourceId,
        messageId: f.messageId,
        eventType: f.kind === 'rejected' ? 'unknown' : f.eventType,
        receivedAt: at,
      });
  }
  if (earliest.size === 0) return { receivedAt, existed };
  const rows = await rowsAsJson<{ source_id: string; message_id: string; received_at: unknown }>(
    tx,
    `select m.source_id, m.message_id, m.received_at
     from messages m join jsonb_to_recordset($1::text::jsonb) as x("sourceId" text, "messageId" text)
       on m.source_id = x."sourceId" and m.message_id = x."messageId"`,
    [recordset([...earliest.values()])],
  );
  for (const r of rows) {
    const k = messageKey({ sourceId: r.source_id, messageId: r.message_id });
    receivedAt.set(k, ms(r.received_at));
    existed.add(k);
    earliest.delete(k);
  }
  if (earliest.size > 0) {
    await tx.query(
      `insert into messages (source_id, message_id, event_type, received_at)
       select x."sourceId", x."messageId", x."eventType", to_timestamp(x."receivedAt" / 1000.0)
       from jsonb_to_recordset($1::text::jsonb)
         as x("sourceId" text, "messageId" text, "eventType" text, "receivedAt" double precision)
       on conflict (source_id, message_id) do nothing`,
      [recordset([...earliest.values()])],
    );
    for (const [k, e] of earliest) receivedAt.set(k, e.receivedAt);
  }
  return { receivedAt, existed };
}

/** A message-level `rejected` row per rejected message (the first rejection of a message stays). */
async function writeRejectionStates(
  tx: Sql,
  rejections: RejectedEntry[],
  receivedAt: Map<string, number>,
): Promise<void> {
  if (rejections.length === 0) return;
  const first = new Map<string, RejectedEntry>();
  for (const r of rejections) if (!first.has(messageKey(r))) first.set(messageKey(r), r);
  await tx.query(
    `insert into deliveries (source_id, message_id, destination_id, state, state_at, received_at,
       reject_code, reject_message, reject_origin)
     select x."sourceId", x."messageId", $2, 'rejected', to_timestamp(x.at / 1000.0),
       to_timestamp(x."receivedAt" / 1000.0), x.code, x.message, x.origin
     from jsonb_to_recordset($1::text::jsonb) as x("sourceId" text, "messageId" text, at double precision,
       "receivedAt" double precision, code text, message text, origin text)
     on conflict (source_id, message_id, destination_id) do nothing`,
    [
      recordset(
        [...first.values()].map((r) => ({
          sourceId: r.sourceId,
          messageId: r.messageId,
          at: r.at,
          receivedAt: receivedAt.get(messageKey(r)) ?? r.at,
          code: r.code,
          message: r.message,
          origin: r.origin,
        })),
      ),
      NO_DESTINATION,
    ],
  );
}
