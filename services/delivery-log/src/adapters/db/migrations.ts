import type { Sql } from './database.ts';
import { LOG_TABLES } from './retention.ts';

/**
 * The schema, as ordered migrations (docs/delivery-log.md, "Database"). Each runs once, in a
 * transaction, recorded in `schema_migrations`; start-up applies those not yet applied.
 */
export const MIGRATIONS: readonly string[] = [
  `
  create table log_instance (id text primary key, created_at timestamptz not null default now());
  create table messages (
    source_id text not null,
    message_id text not null,
    event_type text not null default 'unknown',
    received_at timestamptz not null,
    event jsonb,
    primary key (source_id, message_id)
  );
  create index messages_received on messages (received_at desc, source_id, message_id);
  create table deliveries (
    source_id text not null,
    message_id text not null,
    destination_id text not null,
    state text not null,
    state_at timestamptz not null,
    received_at timestamptz not null,
    attempts integer not null default 0,
    last_error text,
    dead_reason text,
    reject_code text,
    reject_message text,
    reject_origin text,
    primary key (source_id, message_id, destination_id)
  );
  create index deliveries_list on deliveries (received_at desc, source_id, message_id);
  create index deliveries_state on deliveries (state, received_at desc);
  create index deliveries_destination on deliveries (destination_id, received_at desc);
  create table attempts (
    topic text not null,
    partition integer not null,
    record_offset bigint not null,
    source_id text not null,
    message_id text not null,
    destination_id text not null,
    endpoint text not null,
    attempt integer not null,
    at timestamptz not null,
    outcome text not null,
    status integer,
    error text,
    latency_ms double precision not null,
    response_snippet text,
    primary key (topic, partition, record_offset)
  );
  create index attempts_message on attempts (source_id, message_id, destination_id, at);
  create index attempts_health on attempts (destination_id, at);
  create table rejections (
    topic text not null,
    partition integer not null,
    record_offset bigint not null,
    source_id text not null,
    message_id text not null,
    at timestamptz not null,
    value text,
    primary key (topic, partition, record_offset)
  );
  create table replays (
    id bigserial primary key,
    requested_at timestamptz not null,
    source_id text,
    message_id text,
    destination_id text,
    filter jsonb not null,
    replayed integer not null,
    matched integer not null
  );
  create index replays_message on replays (source_id, message_id);
  `,
  // The dead-letter index (replay-log.ts): a replay reads just the records it names. A row
  // made from a replay marker read before its dead letter has no message yet.
  `
  create table dead_letters (
    topic text not null,
    partition integer not null,
    record_offset bigint not null,
    source_id text,
    message_id text,
    destination_id text,
    reason text,
    dead_at timestamptz,
    replayed_at timestamptz,
    kept_at timestamptz not null,
    primary key (topic, partition, record_offset)
  );
  create index dead_letters_destination on dead_letters (destination_id, dead_at);
  create index dead_letters_source on dead_letters (source_id, message_id);
  create index dead_letters_kept on dead_letters (kept_at);
  alter table replays add column bulk boolean not null default false
  `,
  // Events the JSON type refuses, deletions, records the database refused (docs/delivery-log.md).
  `
  alter table messages add column event_text text;
  alter table messages add column event_note text;
  alter table messages add column user_id text;
  update messages set user_id = event->>'userId' where jsonb_typeof(event) = 'object';
  create index messages_user on messages (source_id, user_id) where user_id is not null;
  alter table rejections add column user_id text;
  create index rejections_user on rejections (source_id, user_id) where user_id is not null;
  create table deletions (
    source_id text not null,
    user_id text not null,
    deletion_id text not null,
    requested_at timestamptz not null,
    primary key (source_id, user_id, deletion_id)
  );
  create table unstored (
    id bigserial primary key,
    at timestamptz not null default now(),
    kind text not null,
    source_id text not null,
    message_id text not null,
    reason text not null,
    error text
  );
  create index unstored_message on unstored (source_id, message_id);
  `,
  // Retention deletes in small batches by each table's time column (retention.ts): an
  // index starting with that column, so a batch reads only the rows it deletes.
  `
  create index attempts_at on attempts (at);
  create index rejections_at on rejections (at);
  create index replays_requested on replays (requested_at);
  create index unstored_at on unstored (at);
  create index deletions_requested on deletions (requested_at);
  `,
  // Batched delivery (docs/reference/batches.md): the batch an attempt's event went in, and a way
  // to list a batch's events. Attempts written before have none (null).
  `
  alter table attempts add column batch_id text;
  alter table attempts add column batch_size integer;
  create index attempts_batch on attempts (batch_id, at) where batch_id is not null;
  `,
  // The ledger (docs/delivery-log.md, "Ledger"): where each unsettled delivery's retry window runs
  // from, and an index holding only the unsettled ones, so the ledger's gauges read those alone.
  // Rows from before take their receive time, or their last attempt (a later start: reported late, never early).
  `
  alter table deliveries add column window_from timestamptz;
  update deliveries set window_from = case when state = 'retrying' then state_at else received_at end
    where state in ('delivering', 'retrying');
  create index deliveries_unsettled on deliveries (window_from, destination_id)
    where state in ('delivering', 'retrying');
  `,
  // Tracing (docs/operations.md, "Following one event"): the trace id of the event's record; null
  // for events written before, or without a traceparent.
  `
  alter table messages add column trace_id text;
  `,
  // Runtime destinations' audit (docs/reference/runtime-destinations.md, "Audit"): each change made
  // through this log's API, who made it, when, and the fields it changed (names only: no value).
  `
  create table destination_changes (
    destination_id text not null,
    version integer not null,
    change text not null,
    changed_by text not null,
    changed_at timestamptz not null,
    fields jsonb not null,
    primary key (destination_id, version)
  );
  create index destination_changes_at on destination_changes (changed_at desc);
  `,
  // Runtime sources' audit (docs/reference/runtime-sources.md, "API"): as the destinations'.
  `
  create table source_changes (
    source_id text not null,
    version integer not null,
    change text not null,
    changed_by text not null,
    changed_at timestamptz not null,
    fields jsonb not null,
    primary key (source_id, version)
  );
  create index source_changes_at on source_changes (changed_at desc);
  `,
  // Who made a change, by token id beside its name (docs/reference/tokens.md, "What is recorded"):
  // null on rows from before. The actions on destinations (docs/reference/destination-actions.md,
  // "Recorded actions"), kept once each as the log reads them: by action id, or for a record written
  // before actions had one by its key and time; pruned by `at` with the log (retention.ts), listed
  // newest first (in the order kept within one millisecond), per destination for a tenant.
  `
  alter table destination_changes add column changed_by_token_id text;
  alter table source_changes add column changed_by_token_id text;
  create index destination_changes_subject on destination_changes (destination_id, changed_at desc);
  create index source_changes_subject on source_changes (source_id, changed_at desc);
  create table destination_actions (
    seq bigserial not null,
    action_key text primary key,
    id text,
    destination_id text not null,
    endpoint_ref text,
    action text not null,
    state text not null,
    reason text not null,
    by_name text not null,
    by_token_id text,
    at timestamptz not null,
    auto boolean not null default false
  );
  create index destination_actions_at on destination_actions (at desc, seq desc);
  create index destination_actions_destination on destination_actions (destination_id, at desc, seq desc);
  `,
];

/** Applies the migrations not yet applied; returns the database's instance id (made on first start). */
export async function migrate(sql: Sql): Promise<string> {
  await sql.query(
    'create table if not exists schema_migrations (version integer primary key, applied_at timestamptz not null default now())',
  );
  const done = new Set(
    (await sql.query<{ version: number }>('select version from schema_migrations')).map((r) => Number(r.version)),
  );
  for (const [i, text] of MIGRATIONS.entries()) {
    const version = i + 1;
    if (done.has(version)) continue;
    await sql.transaction(async (tx) => {
      for (const statement of text
        .split(';')
        .map((s) => s.trim())
        .filter(Boolean))
        await tx.query(statement);
      await tx.query('insert into schema_migrations (version) values ($1) on conflict do nothing', [version]);
    });
  }
  if (!sql.durable) {
    // An in-memory database is gone with the process, so the write-ahead log protects nothing
    // there: its tables skip it (faster ingestion). A data directory or a server keeps the log.
    for (const table of LOG_TABLES) await sql.query(`alter table ${table} set unlogged`);
  }
  const id = crypto.randomUUID();
  await sql.query('insert into log_instance (id) select $1 where not exists (select 1 from log_instance)', [id]);
  const [row] = await sql.query<{ id: string }>('select id from log_instance limit 1');
  return row!.id;
}
