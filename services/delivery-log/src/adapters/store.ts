import { MAX_EVENT_BYTES } from '../constants.ts';
import type { Cursor } from '../domain/cursor.ts';
import type { AttemptEntry, DeadEntry, EventEntry, LogEntry, RejectedEntry } from '../domain/records.ts';
import { advance, type DeliveryState, type Fact, type StateAt } from '../domain/state.ts';
import type { Sql } from './database.ts';

/** Destination id of the row that holds a message-level rejection (no destination was reached). */
export const NO_DESTINATION = '';

const iso = (ms: number) => new Date(ms).toISOString();
const ms = (v: unknown) => (v instanceof Date ? v.getTime() : Date.parse(String(v)));

export interface MessageFilter {
  sourceId?: string;
  destinationId?: string;
  state?: DeliveryState;
  messageId?: string;
  /** Received at or after (epoch ms). */
  since?: number;
  /** Received before (epoch ms). */
  until?: number;
}

export interface DeliveryView {
  destinationId: string | null;
  state: DeliveryState;
  stateAt: string;
  attempts: number;
  lastError: string | null;
  deadReason: string | null;
  reject: { code: string; message: string; origin: string } | null;
}

export interface AttemptView {
  destinationId: string;
  endpoint: string;
  attempt: number;
  at: string;
  outcome: string;
  status: number | null;
  error: string | null;
  latencyMs: number;
  responseSnippet: string | null;
}

export interface MessageSummary {
  sourceId: string;
  messageId: string;
  eventType: string;
  receivedAt: string;
  deliveries: { destinationId: string | null; state: DeliveryState }[];
}

export interface MessageView extends MessageSummary {
  event: unknown;
  deliveries: DeliveryView[];
  attempts: AttemptView[];
  replays: { requestedAt: string; destinationId: string | null; replayed: number }[];
  rejectedValues: string[];
}

export interface EndpointHealth {
  destinationId: string;
  endpoint: string;
  attempts: number;
  successRate: number;
  p50LatencyMs: number | null;
  p95LatencyMs: number | null;
  lastError: { at: string; status: number | null; error: string | null } | null;
  lastAttemptAt: string | null;
}

type Row = Record<string, unknown>;

/** Reads and writes the log's tables (docs/delivery-log.md). One instance per database. */
export class LogStore {
  readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /**
   * Writes what a batch of records says, in one transaction. Idempotent: attempts and rejections
   * are keyed by their place in their topic, events by message, and states only move forward
   * (`advance`), so writing a batch again changes nothing.
   */
  async ingest(entries: readonly LogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.sql.transaction(async (tx) => {
      for (const entry of entries) {
        switch (entry.kind) {
          case 'event':
            await this.#event(tx, entry);
            break;
          case 'attempt':
            await this.#attempt(tx, entry);
            break;
          case 'dead':
            await this.#dead(tx, entry);
            break;
          case 'rejected':
            await this.#rejected(tx, entry);
            break;
        }
      }
    });
  }

  async #ensureMessage(
    tx: Sql,
    sourceId: string,
    messageId: string,
    eventType: string,
    receivedAt: number,
  ): Promise<number> {
    const rows = await tx.query<{ received_at: unknown }>(
      `insert into messages (source_id, message_id, event_type, received_at) values ($1, $2, $3, $4)
       on conflict (source_id, message_id) do update set event_type = messages.event_type
       returning received_at`,
      [sourceId, messageId, eventType, iso(receivedAt)],
    );
    return ms(rows[0]!.received_at);
  }

  async #event(tx: Sql, e: EventEntry): Promise<void> {
    const event = Buffer.byteLength(e.event) > MAX_EVENT_BYTES ? JSON.stringify({ truncated: true }) : e.event;
    // The event fixes the message's receive time; rows made earlier from attempts take it on.
    const rows = await tx.query(
      `insert into messages (source_id, message_id, event_type, received_at, event) values ($1, $2, $3, $4, $5::text::jsonb)
       on conflict (source_id, message_id) do update set event = excluded.event, event_type = excluded.event_type,
         received_at = excluded.received_at
       where messages.event is null
       returning 1`,
      [e.sourceId, e.messageId, e.eventType, iso(e.receivedAt), event],
    );
    if (rows.length === 0) return;
    await tx.query('update deliveries set received_at = $3 where source_id = $1 and message_id = $2', [
      e.sourceId,
      e.messageId,
      iso(e.receivedAt),
    ]);
    for (const destinationId of e.destinationIds) {
      await tx.query(
        `insert into deliveries (source_id, message_id, destination_id, state, state_at, received_at) values ($1, $2, $3, 'delivering', $4, $4)
         on conflict do nothing`,
        [e.sourceId, e.messageId, destinationId, iso(e.receivedAt)],
      );
    }
  }

  async #state(
    tx: Sql,
    key: [string, string, string],
    receivedAt: number,
    fact: Fact,
    extra: { attempt?: boolean; lastError?: string | null; deadReason?: string },
  ): Promise<void> {
    const [row] = await tx.query<{ state: DeliveryState; state_at: unknown }>(
      'select state, state_at from deliveries where source_id = $1 and message_id = $2 and destination_id = $3 for update',
      key,
    );
    const current: StateAt | undefined = row ? { state: row.state, at: ms(row.state_at) } : undefined;
    const next = advance(current, fact);
    const moved = current === undefined || next.state !== current.state || next.at !== current.at;
    await tx.query(
      `insert into deliveries (source_id, message_id, destination_id, state, state_at, received_at, attempts, last_error, dead_reason)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       on conflict (source_id, message_id, destination_id) do update set
         attempts = deliveries.attempts + excluded.attempts,
         state = case when $10 then excluded.state else deliveries.state end,
         state_at = case when $10 then excluded.state_at else deliveries.state_at end,
         last_error = case when $10 and excluded.last_error is not null then excluded.last_error else deliveries.last_error end,
         dead_reason = case when $10 then excluded.dead_reason else deliveries.dead_reason end`,
      [
        ...key,
        next.state,
        iso(next.at),
        iso(receivedAt),
        extra.attempt ? 1 : 0,
        extra.lastError ?? null,
        next.state === 'dead' ? (extra.deadReason ?? null) : null,
        moved,
      ],
    );
  }

  async #attempt(tx: Sql, a: AttemptEntry): Promise<void> {
    const inserted = await tx.query(
      `insert into attempts (topic, partition, record_offset, source_id, message_id, destination_id, endpoint, attempt, at,
         outcome, status, error, latency_ms, response_snippet)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
       on conflict do nothing returning 1`,
      [
        a.position.topic,
        a.position.partition,
        a.position.offset,
        a.sourceId,
        a.messageId,
        a.destinationId,
        a.endpoint,
        a.attempt,
        iso(a.at),
        a.outcome,
        a.status ?? null,
        a.error ?? null,
        a.latencyMs,
        a.responseSnippet ?? null,
      ],
    );
    if (inserted.length === 0) return;
    const receivedAt = await this.#ensureMessage(tx, a.sourceId, a.messageId, a.eventType, a.at);
    const lastError =
      a.outcome === 'success' ? null : (a.error ?? (a.status !== undefined ? `http_${a.status}` : 'failed'));
    await this.#state(
      tx,
      [a.sourceId, a.messageId, a.destinationId],
      receivedAt,
      { kind: 'attempt', outcome: a.outcome, at: a.at },
      { attempt: true, lastError },
    );
  }

  async #dead(tx: Sql, d: DeadEntry): Promise<void> {
    const receivedAt = await this.#ensureMessage(tx, d.sourceId, d.messageId, d.eventType, d.receivedAt ?? d.at);
    await this.#state(
      tx,
      [d.sourceId, d.messageId, d.destinationId],
      receivedAt,
      { kind: 'dead', at: d.at },
      { lastError: d.lastError ?? null, deadReason: d.reason },
    );
  }

  async #rejected(tx: Sql, r: RejectedEntry): Promise<void> {
    const inserted = await tx.query(
      `insert into rejections (topic, partition, record_offset, source_id, message_id, at, value) values ($1, $2, $3, $4, $5, $6, $7)
       on conflict do nothing returning 1`,
      [r.position.topic, r.position.partition, r.position.offset, r.sourceId, r.messageId, iso(r.at), r.value ?? null],
    );
    if (inserted.length === 0) return;
    const receivedAt = await this.#ensureMessage(tx, r.sourceId, r.messageId, 'unknown', r.at);
    await tx.query(
      `insert into deliveries (source_id, message_id, destination_id, state, state_at, received_at, reject_code, reject_message, reject_origin)
       values ($1, $2, $3, 'rejected', $4, $5, $6, $7, $8)
       on conflict (source_id, message_id, destination_id) do nothing`,
      [r.sourceId, r.messageId, NO_DESTINATION, iso(r.at), iso(receivedAt), r.code, r.message, r.origin],
    );
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
      return gone.length;
    });
  }

  async message(sourceId: string, messageId: string): Promise<MessageView | undefined> {
    const [m] = await this.sql.query<Row>('select * from messages where source_id = $1 and message_id = $2', [
      sourceId,
      messageId,
    ]);
    if (!m) return undefined;
    const key = [sourceId, messageId];
    const deliveries = await this.sql.query<Row>(
      'select * from deliveries where source_id = $1 and message_id = $2 order by destination_id',
      key,
    );
    const attempts = await this.sql.query<Row>(
      'select * from attempts where source_id = $1 and message_id = $2 order by at, endpoint',
      key,
    );
    const replays = await this.sql.query<Row>(
      'select * from replays where source_id = $1 and message_id = $2 order by requested_at',
      key,
    );
    const rejected = await this.sql.query<Row>(
      'select value from rejections where source_id = $1 and message_id = $2 order by at',
      key,
    );
    return {
      sourceId,
      messageId,
      eventType: String(m.event_type),
      receivedAt: iso(ms(m.received_at)),
      event: typeof m.event === 'string' ? JSON.parse(m.event) : (m.event ?? null),
      deliveries: deliveries.map(deliveryView),
      attempts: attempts.map((a) => ({
        destinationId: String(a.destination_id),
        endpoint: String(a.endpoint),
        attempt: Number(a.attempt),
        at: iso(ms(a.at)),
        outcome: String(a.outcome),
        status: a.status === null ? null : Number(a.status),
        error: (a.error as string | null) ?? null,
        latencyMs: Number(a.latency_ms),
        responseSnippet: (a.response_snippet as string | null) ?? null,
      })),
      replays: replays.map((r) => ({
        requestedAt: iso(ms(r.requested_at)),
        destinationId: (r.destination_id as string | null) ?? null,
        replayed: Number(r.replayed),
      })),
      rejectedValues: rejected.map((r) => String(r.value ?? '')),
    };
  }

  /**
   * Messages matching `filter`, newest first, `limit` at most, after `cursor` (keyset pagination
   * on receive time, source and message id: stable under inserts). Returns one more than asked
   * when there is a next page.
   */
  async listMessages(filter: MessageFilter, limit: number, cursor?: Cursor): Promise<MessageSummary[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const p = (v: unknown) => (params.push(v), `$${params.length}`);
    const byDelivery = filter.destinationId !== undefined || filter.state !== undefined;
    if (filter.sourceId !== undefined) where.push(`m.source_id = ${p(filter.sourceId)}`);
    if (filter.messageId !== undefined) where.push(`m.message_id = ${p(filter.messageId)}`);
    if (filter.since !== undefined) where.push(`m.received_at >= ${p(iso(filter.since))}`);
    if (filter.until !== undefined) where.push(`m.received_at < ${p(iso(filter.until))}`);
    if (byDelivery) {
      const conds = ['d.source_id = m.source_id', 'd.message_id = m.message_id'];
      if (filter.destinationId !== undefined) conds.push(`d.destination_id = ${p(filter.destinationId)}`);
      if (filter.state !== undefined) conds.push(`d.state = ${p(filter.state)}`);
      where.push(`exists (select 1 from deliveries d where ${conds.join(' and ')})`);
    }
    if (cursor) {
      where.push(
        `(m.received_at, m.source_id, m.message_id) < (${p(iso(cursor.receivedAt))}, ${p(cursor.sourceId)}, ${p(cursor.messageId)})`,
      );
    }
    const rows = await this.sql.query<Row>(
      `select m.source_id, m.message_id, m.event_type, m.received_at from messages m
       ${where.length > 0 ? `where ${where.join(' and ')}` : ''}
       order by m.received_at desc, m.source_id desc, m.message_id desc limit ${p(limit + 1)}`,
      params,
    );
    if (rows.length === 0) return [];
    const keys = rows.map((r) => `${r.source_id}\u0000${r.message_id}`);
    const states = await this.sql.query<Row>(
      `select source_id, message_id, destination_id, state from deliveries
       where (source_id, message_id) in (select x->>0, x->>1 from jsonb_array_elements($1::text::jsonb) x) order by destination_id`,
      [JSON.stringify(rows.map((r) => [r.source_id, r.message_id]))],
    );
    const byKey = new Map<string, { destinationId: string | null; state: DeliveryState }[]>();
    for (const s of states) {
      const k = `${s.source_id}\u0000${s.message_id}`;
      const list = byKey.get(k) ?? [];
      list.push({
        destinationId: s.destination_id === NO_DESTINATION ? null : String(s.destination_id),
        state: s.state as DeliveryState,
      });
      byKey.set(k, list);
    }
    return rows.map((r, i) => ({
      sourceId: String(r.source_id),
      messageId: String(r.message_id),
      eventType: String(r.event_type),
      receivedAt: iso(ms(r.received_at)),
      deliveries: byKey.get(keys[i]!) ?? [],
    }));
  }

  /** The newest events of a source, with their payload. */
  async recentEvents(
    sourceId: string,
    limit: number,
  ): Promise<{ messageId: string; eventType: string; receivedAt: string; event: unknown }[]> {
    const rows = await this.sql.query<Row>(
      `select message_id, event_type, received_at, event from messages where source_id = $1 and event is not null
       order by received_at desc, message_id desc limit $2`,
      [sourceId, limit],
    );
    return rows.map((r) => ({
      messageId: String(r.message_id),
      eventType: String(r.event_type),
      receivedAt: iso(ms(r.received_at)),
      event: typeof r.event === 'string' ? JSON.parse(r.event) : r.event,
    }));
  }

  /** Per endpoint of `destinationId` (or of every destination): attempts since `since`, success rate, latencies, last error. */
  async endpointHealth(since: number, destinationId?: string): Promise<EndpointHealth[]> {
    const params: unknown[] = [iso(since)];
    if (destinationId !== undefined) params.push(destinationId);
    const rows = await this.sql.query<Row>(
      `select destination_id, endpoint, count(*)::int as attempts,
         sum(case when outcome = 'success' then 1 else 0 end)::int as successes,
         percentile_cont(0.5) within group (order by latency_ms) as p50,
         percentile_cont(0.95) within group (order by latency_ms) as p95,
         max(at) as last_at
       from attempts where at >= $1 ${destinationId !== undefined ? 'and destination_id = $2' : ''}
       group by destination_id, endpoint order by destination_id, endpoint`,
      params,
    );
    const errors = await this.sql.query<Row>(
      `select distinct on (destination_id, endpoint) destination_id, endpoint, at, status, error from attempts
       where at >= $1 and outcome <> 'success' ${destinationId !== undefined ? 'and destination_id = $2' : ''}
       order by destination_id, endpoint, at desc`,
      params,
    );
    const lastError = new Map(errors.map((e) => [`${e.destination_id} ${e.endpoint}`, e]));
    return rows.map((r) => {
      const e = lastError.get(`${r.destination_id} ${r.endpoint}`);
      const attempts = Number(r.attempts);
      return {
        destinationId: String(r.destination_id),
        endpoint: String(r.endpoint),
        attempts,
        successRate: attempts === 0 ? 0 : Number(r.successes) / attempts,
        p50LatencyMs: r.p50 === null ? null : Number(r.p50),
        p95LatencyMs: r.p95 === null ? null : Number(r.p95),
        lastError: e
          ? {
              at: iso(ms(e.at)),
              status: e.status === null ? null : Number(e.status),
              error: (e.error as string | null) ?? null,
            }
          : null,
        lastAttemptAt: r.last_at === null ? null : iso(ms(r.last_at)),
      };
    });
  }

  /** Counts per destination and state (the console's destination overview). */
  async destinationStates(): Promise<{ destinationId: string | null; state: DeliveryState; count: number }[]> {
    const rows = await this.sql.query<Row>(
      'select destination_id, state, count(*)::int as n from deliveries group by destination_id, state order by destination_id, state',
    );
    return rows.map((r) => ({
      destinationId: r.destination_id === NO_DESTINATION ? null : String(r.destination_id),
      state: r.state as DeliveryState,
      count: Number(r.n),
    }));
  }

  async recordReplay(input: {
    at: number;
    sourceId?: string;
    messageId?: string;
    destinationId?: string;
    filter: object;
    replayed: number;
    matched: number;
  }): Promise<void> {
    await this.sql.query(
      'insert into replays (requested_at, source_id, message_id, destination_id, filter, replayed, matched) values ($1, $2, $3, $4, $5::text::jsonb, $6, $7)',
      [
        iso(input.at),
        input.sourceId ?? null,
        input.messageId ?? null,
        input.destinationId ?? null,
        JSON.stringify(input.filter),
        input.replayed,
        input.matched,
      ],
    );
  }
}

function deliveryView(d: Row): DeliveryView {
  return {
    destinationId: d.destination_id === NO_DESTINATION ? null : String(d.destination_id),
    state: d.state as DeliveryState,
    stateAt: iso(ms(d.state_at)),
    attempts: Number(d.attempts),
    lastError: (d.last_error as string | null) ?? null,
    deadReason: (d.dead_reason as string | null) ?? null,
    reject: d.reject_code
      ? { code: String(d.reject_code), message: String(d.reject_message ?? ''), origin: String(d.reject_origin ?? '') }
      : null,
  };
}
