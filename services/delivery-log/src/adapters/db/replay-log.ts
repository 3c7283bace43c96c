import type { DeadLetterFilter } from '@sluice/dead-letters';
import type { DeadEntry, ReadEntry, ReplayMarkerEntry } from '../../domain/records.ts';
import type { Sql } from './database.ts';
import { iso } from './sql-values.ts';

/** Where one dead letter is on the dead-letter topic. */
export interface DeadLetterPosition {
  partition: number;
  offset: string;
}

/** The dead letters of the index that match a filter. */
export interface DeadLetterMatch {
  /** Dead letters that matched. */
  matched: number;
  /** Of those, the ones an earlier replay re-injected (skipped). */
  skippedAlreadyReplayed: number;
  /** The others, at most `limit`, by partition and offset; with the message each is about. */
  toReplay: (DeadLetterPosition & { sourceId: string; messageId: string; destinationId: string })[];
  /** How many were not replayed yet (may exceed `toReplay.length`). */
  notReplayed: number;
}

/** One replay as the log records it: by the API, of one message or of a filter. */
export interface ReplayRecord {
  at: number;
  /** Set for the replay of one message. */
  sourceId?: string;
  messageId?: string;
  destinationId?: string;
  filter: object;
  replayed: number;
  matched: number;
  /** A replay of a filter: the messages it re-injected, each listed on the message's page. */
  messages?: { sourceId: string; messageId: string; destinationId: string }[];
}

/**
 * The dead-letter index and the replays (docs/delivery-log.md, "Replays"): where each dead letter
 * is on the dead-letter topic (topic, partition, offset), what it is about (source, message,
 * destination, reason, time of death) and when it was last replayed (from the replay markers any
 * replay writes, the CLI's included). A replay asks the index which dead letters match and reads
 * just those records; the log keeps no copy of a dead letter's body or headers (the endpoint URLs
 * of its retry state stay in Kafka only).
 */
export class ReplayLog {
  readonly #sql: Sql;
  constructor(sql: Sql) {
    this.#sql = sql;
  }

  /** Keeps the dead letters and replay markers of a batch (idempotent, in any order). */
  async ingest(entries: readonly ReadEntry[]): Promise<void> {
    const letters = entries.filter((e): e is DeadEntry => e.kind === 'dead');
    const markers = entries.filter((e): e is ReplayMarkerEntry => e.kind === 'replay-marker');
    if (letters.length > 0) {
      await this.#sql.query(
        `insert into dead_letters (topic, partition, record_offset, source_id, message_id, destination_id, reason,
           dead_at, kept_at)
         select x.topic, x.partition, x.record_offset::bigint, x.source_id, x.message_id, x.destination_id, x.reason,
           to_timestamp(x.dead_at / 1000.0), to_timestamp(x.dead_at / 1000.0)
         from jsonb_to_recordset($1::text::jsonb) as x(topic text, partition int, record_offset text, source_id text,
           message_id text, destination_id text, reason text, dead_at double precision)
         on conflict (topic, partition, record_offset) do update set source_id = excluded.source_id,
           message_id = excluded.message_id, destination_id = excluded.destination_id, reason = excluded.reason,
           dead_at = excluded.dead_at, kept_at = excluded.kept_at`,
        [
          JSON.stringify(
            letters.map((l) => ({
              topic: l.position.topic,
              partition: l.position.partition,
              record_offset: l.position.offset,
              source_id: l.sourceId,
              message_id: l.messageId,
              destination_id: l.destinationId,
              reason: l.reason,
              dead_at: l.at,
            })),
          ),
        ],
      );
    }
    if (markers.length > 0) {
      await this.#replayed(
        markers.map((m) => ({ topic: m.position.topic, partition: m.position.partition, offset: m.position.offset })),
        markers.map((m) => m.at),
      );
    }
  }

  /**
   * The dead letters on `topic` matching `filter` (source, message, destination, reason, time of
   * death), from the index: counts, and the positions of at most `limit` not yet replayed.
   */
  async match(topic: string, filter: DeadLetterFilter, limit: number): Promise<DeadLetterMatch> {
    const params: unknown[] = [topic];
    const p = (v: unknown) => (params.push(v), `$${params.length}`);
    const where = ['topic = $1', 'source_id is not null'];
    if (filter.sourceId !== undefined) where.push(`source_id = ${p(filter.sourceId)}`);
    if (filter.messageId !== undefined) where.push(`message_id = ${p(filter.messageId)}`);
    if (filter.destinationId !== undefined) where.push(`destination_id = ${p(filter.destinationId)}`);
    if (filter.reason !== undefined) where.push(`reason = ${p(filter.reason)}`);
    if (filter.since !== undefined) where.push(`dead_at >= ${p(iso(filter.since))}`);
    if (filter.until !== undefined) where.push(`dead_at < ${p(iso(filter.until))}`);
    const [counts] = await this.#sql.query<{ matched: number; replayed: number }>(
      `select count(*)::int as matched, count(replayed_at)::int as replayed from dead_letters
       where ${where.join(' and ')}`,
      params,
    );
    const matched = Number(counts?.matched ?? 0);
    const skippedAlreadyReplayed = Number(counts?.replayed ?? 0);
    const rows = await this.#sql.query<{
      partition: number;
      record_offset: string;
      source_id: string;
      message_id: string;
      destination_id: string;
    }>(
      `select partition, record_offset::text as record_offset, source_id, message_id, destination_id
       from dead_letters where ${where.join(' and ')} and replayed_at is null
       order by partition, record_offset limit ${p(limit)}`,
      params,
    );
    return {
      matched,
      skippedAlreadyReplayed,
      notReplayed: matched - skippedAlreadyReplayed,
      toReplay: rows.map((r) => ({
        partition: Number(r.partition),
        offset: String(r.record_offset),
        sourceId: r.source_id,
        messageId: r.message_id,
        destinationId: r.destination_id,
      })),
    };
  }

  /** Marks dead letters replayed at `at` (their replay markers, read later, say the same). */
  markReplayed(topic: string, positions: readonly DeadLetterPosition[], at: number): Promise<void> {
    return this.#replayed(
      positions.map((p) => ({ topic, ...p })),
      positions.map(() => at),
    );
  }

  async #replayed(positions: { topic: string; partition: number; offset: string }[], at: number[]): Promise<void> {
    if (positions.length === 0) return;
    // A marker read before its dead letter (another lane) makes the row, kept by the replay time
    // until the letter gives it its time of death (retention counts from that).
    await this.#sql.query(
      `insert into dead_letters (topic, partition, record_offset, replayed_at, kept_at)
       select x.topic, x.partition, x.record_offset::bigint, to_timestamp(x.at / 1000.0), to_timestamp(x.at / 1000.0)
       from jsonb_to_recordset($1::text::jsonb) as x(topic text, partition int, record_offset text, at double precision)
       on conflict (topic, partition, record_offset) do update set
         replayed_at = greatest(dead_letters.replayed_at, excluded.replayed_at)`,
      [
        JSON.stringify(
          positions.map((p, i) => ({ topic: p.topic, partition: p.partition, record_offset: p.offset, at: at[i] })),
        ),
      ],
    );
  }

  /**
   * Records a replay: one row for the replay, and for a replay of a filter one more per message
   * and destination it re-injected, so the message's page lists it (`bulk`).
   */
  async record(input: ReplayRecord): Promise<void> {
    const rows = [
      {
        source_id: input.sourceId ?? null,
        message_id: input.messageId ?? null,
        destination_id: input.destinationId ?? null,
        replayed: input.replayed,
        matched: input.matched,
        bulk: false,
      },
    ];
    const perMessage = new Map<string, (typeof rows)[number]>();
    for (const m of input.messages ?? []) {
      const key = JSON.stringify([m.sourceId, m.messageId, m.destinationId]);
      const row = perMessage.get(key) ?? {
        source_id: m.sourceId,
        message_id: m.messageId,
        destination_id: m.destinationId,
        replayed: 0,
        matched: 0,
        bulk: true,
      };
      row.replayed += 1;
      row.matched += 1;
      perMessage.set(key, row);
    }
    rows.push(...perMessage.values());
    await this.#sql.query(
      `insert into replays (requested_at, source_id, message_id, destination_id, filter, replayed, matched, bulk)
       select $1, x.source_id, x.message_id, x.destination_id, $2::text::jsonb, x.replayed, x.matched, x.bulk
       from jsonb_to_recordset($3::text::jsonb) as x(source_id text, message_id text, destination_id text,
         replayed int, matched int, bulk boolean)`,
      [iso(input.at), JSON.stringify(input.filter), JSON.stringify(rows)],
    );
  }
}
