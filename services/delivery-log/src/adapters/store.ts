import { MAX_EVENT_BYTES } from '../constants.ts';
import type { Cursor } from '../domain/cursor.ts';
import type { AttemptEntry, DeadEntry, EventEntry, LogEntry, RejectedEntry } from '../domain/records.ts';
import { advance, type DeliveryState, type Fact, type StateAt } from '../domain/state.ts';
import type { Sql } from './database.ts';
import { pruneBefore } from './retention.ts';

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

const messageKey = (e: { sourceId: string; messageId: string }) => `${e.sourceId}\u0000${e.messageId}`;
const positionKey = (p: { topic: string; partition: number; offset: string }) =>
  `${p.topic}\u0000${p.partition}\u0000${p.offset}`;

/** Events a batch stored: keyed by message. */
interface StoredEvents {
  /** Their message row is new. */
  inserted: Map<string, EventEntry>;
  /** Their message row existed (made from attempts read before the event). */
  completed: Map<string, EventEntry>;
}

/** Receive time of the messages a batch is about, and which of them existed before the batch. */
interface FactMessages {
  receivedAt: Map<string, number>;
  existed: Set<string>;
}

/**
 * Runs `text` (a statement that returns rows) and takes its rows back as one JSON text: the
 * embedded database's client then decodes one field per statement, not one per column and row.
 */
async function rowsAsJson<T>(tx: Sql, text: string, params: unknown[]): Promise<T[]> {
  const [result] = await tx.query<{ rows: string }>(
    `with w as (${text}) select coalesce(json_agg(w), '[]')::text as rows from w`,
    params,
  );
  return JSON.parse(result!.rows) as T[];
}

function dedupe<T>(items: T[], key: (t: T) => string): T[] {
  const seen = new Map<string, T>();
  for (const item of items) if (!seen.has(key(item))) seen.set(key(item), item);
  return [...seen.values()];
}

/** Reads and writes the log's tables (docs/delivery-log.md). One instance per database. */
export class LogStore {
  readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /**
   * Writes what a batch of records says, in one transaction of a few set-based statements (not
   * one per record). Idempotent: attempts and rejections are keyed by their place in their topic,
   * events by message, and states only move forward (`advance`), so writing a batch again
   * changes nothing. Each delivery row is written once per batch, with the state its event and
   * facts of the batch lead to.
   */
  async ingest(entries: readonly LogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const events = new Map<string, EventEntry>();
    const attempts = new Map<string, AttemptEntry>();
    const rejections = new Map<string, RejectedEntry>();
    const deaths: DeadEntry[] = [];
    for (const e of entries) {
      if (e.kind === 'event') events.set(messageKey(e), events.get(messageKey(e)) ?? e);
      else if (e.kind === 'attempt') attempts.set(positionKey(e.position), e);
      else if (e.kind === 'rejected') rejections.set(positionKey(e.position), e);
      else deaths.push(e);
    }
    await this.sql.transaction(async (tx) => {
      const stored = await this.#events(tx, [...events.values()]);
      const newAttempts = await this.#newAttempts(tx, [...attempts.values()]);
      const newRejections = await this.#newRejections(tx, [...rejections.values()]);
      const messages = await this.#ensureMessages(tx, [...newAttempts, ...deaths, ...newRejections], stored);
      await this.#deliveries(tx, stored, newAttempts, deaths, messages);
      if (newRejections.length > 0) {
        await tx.query(
          `insert into deliveries (source_id, message_id, destination_id, state, state_at, received_at,
             reject_code, reject_message, reject_origin)
           select x.s, x.m, $2, 'rejected', to_timestamp(x.at / 1000.0), to_timestamp(x.r / 1000.0), x.code, x.msg,
             x.origin
           from jsonb_to_recordset($1::text::jsonb)
             as x(s text, m text, at double precision, r double precision, code text, msg text, origin text)
           on conflict (source_id, message_id, destination_id) do nothing`,
          [
            JSON.stringify(
              dedupe(newRejections, messageKey).map((r) => ({
                s: r.sourceId,
                m: r.messageId,
                at: r.at,
                r: messages.receivedAt.get(messageKey(r)) ?? r.at,
                code: r.code,
                msg: r.message,
                origin: r.origin,
              })),
            ),
            NO_DESTINATION,
          ],
        );
      }
    });
  }

  /**
   * Events: the event fixes its message's receive time. Returns the events stored by this batch:
   * `inserted` made their message row, `completed` filled in a row made earlier from attempts.
   */
  async #events(tx: Sql, events: EventEntry[]): Promise<StoredEvents> {
    const stored: StoredEvents = { inserted: new Map(), completed: new Map() };
    if (events.length === 0) return stored;
    const rows = await rowsAsJson<{ source_id: string; message_id: string; inserted: boolean }>(
      tx,
      `insert into messages (source_id, message_id, event_type, received_at, event)
       select x.s, x.m, x.t, to_timestamp(x.r / 1000.0), x.e::jsonb
       from jsonb_to_recordset($1::text::jsonb) as x(s text, m text, t text, r double precision, e text)
       on conflict (source_id, message_id) do update set event = excluded.event, event_type = excluded.event_type,
         received_at = excluded.received_at
       where messages.event is null
       returning source_id, message_id, (xmax = 0) as inserted`,
      [
        JSON.stringify(
          events.map((e) => ({
            s: e.sourceId,
            m: e.messageId,
            t: e.eventType,
            r: e.receivedAt,
            e: Buffer.byteLength(e.event) > MAX_EVENT_BYTES ? JSON.stringify({ truncated: true }) : e.event,
          })),
        ),
      ],
    );
    const byKey = new Map(events.map((e) => [messageKey(e), e]));
    for (const r of rows) {
      const k = `${r.source_id}\u0000${r.message_id}`;
      (r.inserted ? stored.inserted : stored.completed).set(k, byKey.get(k)!);
    }
    return stored;
  }
  /** Inserts the attempts; returns those not seen before. */
  async #newAttempts(tx: Sql, attempts: AttemptEntry[]): Promise<AttemptEntry[]> {
    if (attempts.length === 0) return [];
    const rows = await rowsAsJson<{ topic: string; partition: number; record_offset: string | number | bigint }>(
      tx,
      `insert into attempts (topic, partition, record_offset, source_id, message_id, destination_id, endpoint, attempt, at,
         outcome, status, error, latency_ms, response_snippet)
       select x.topic, x.p, x.o::bigint, x.s, x.m, x.d, x.endpoint, x.n, to_timestamp(x.at / 1000.0), x.outcome,
         x.status, x.error, x.latency, x.snippet
       from jsonb_to_recordset($1::text::jsonb) as x(topic text, p int, o text, s text, m text, d text, endpoint text,
         n int, at double precision, outcome text, status int, error text, latency double precision, snippet text)
       on conflict do nothing returning topic, partition, record_offset::text as record_offset`,
      [
        JSON.stringify(
          attempts.map((a) => ({
            topic: a.position.topic,
            p: a.position.partition,
            o: a.position.offset,
            s: a.sourceId,
            m: a.messageId,
            d: a.destinationId,
            endpoint: a.endpoint,
            n: a.attempt,
            at: a.at,
            outcome: a.outcome,
            status: a.status ?? null,
            error: a.error ?? null,
            latency: a.latencyMs,
            snippet: a.responseSnippet ?? null,
          })),
        ),
      ],
    );
    const inserted = new Set(rows.map((r) => `${r.topic}\u0000${r.partition}\u0000${String(r.record_offset)}`));
    return attempts.filter((a) => inserted.has(positionKey(a.position)));
  }

  async #newRejections(tx: Sql, rejections: RejectedEntry[]): Promise<RejectedEntry[]> {
    if (rejections.length === 0) return [];
    const rows = await rowsAsJson<{ topic: string; partition: number; record_offset: string | number | bigint }>(
      tx,
      `insert into rejections (topic, partition, record_offset, source_id, message_id, at, value)
       select x.topic, x.p, x.o::bigint, x.s, x.m, to_timestamp(x.at / 1000.0), x.v
       from jsonb_to_recordset($1::text::jsonb)
         as x(topic text, p int, o text, s text, m text, at double precision, v text)
       on conflict do nothing returning topic, partition, record_offset::text as record_offset`,
      [
        JSON.stringify(
          rejections.map((r) => ({
            topic: r.position.topic,
            p: r.position.partition,
            o: r.position.offset,
            s: r.sourceId,
            m: r.messageId,
            at: r.at,
            v: r.value ?? null,
          })),
        ),
      ],
    );
    const inserted = new Set(rows.map((r) => `${r.topic}\u0000${r.partition}\u0000${String(r.record_offset)}`));
    return rejections.filter((r) => inserted.has(positionKey(r.position)));
  }

  /**
   * The receive time of every message the batch's facts are about, making a message row for
   * facts read before (or without) their event; and which of those messages existed before this
   * batch (only those can have delivery rows already).
   */
  async #ensureMessages(
    tx: Sql,
    facts: (AttemptEntry | DeadEntry | RejectedEntry)[],
    stored: StoredEvents,
  ): Promise<FactMessages> {
    const receivedAt = new Map<string, number>();
    const existed = new Set<string>();
    for (const [k, e] of stored.inserted) receivedAt.set(k, e.receivedAt);
    for (const [k, e] of stored.completed) {
      receivedAt.set(k, e.receivedAt);
      existed.add(k);
    }
    const earliest = new Map<string, { s: string; m: string; t: string; r: number }>();
    for (const f of facts) {
      const k = messageKey(f);
      if (receivedAt.has(k)) continue;
      const at = f.kind === 'dead' ? (f.receivedAt ?? f.at) : f.at;
      const seen = earliest.get(k);
      if (!seen || at < seen.r)
        earliest.set(k, { s: f.sourceId, m: f.messageId, t: f.kind === 'rejected' ? 'unknown' : f.eventType, r: at });
    }
    if (earliest.size === 0) return { receivedAt, existed };
    const rows = await rowsAsJson<{ source_id: string; message_id: string; received_at: unknown }>(
      tx,
      `select m.source_id, m.message_id, m.received_at
       from messages m join jsonb_to_recordset($1::text::jsonb) as x(s text, m text)
         on m.source_id = x.s and m.message_id = x.m`,
      [JSON.stringify([...earliest.values()].map(({ s, m }) => ({ s, m })))],
    );
    for (const r of rows) {
      const k = `${r.source_id}\u0000${r.message_id}`;
      receivedAt.set(k, ms(r.received_at));
      existed.add(k);
      earliest.delete(k);
    }
    if (earliest.size > 0) {
      await tx.query(
        `insert into messages (source_id, message_id, event_type, received_at)
         select x.s, x.m, x.t, to_timestamp(x.r / 1000.0)
         from jsonb_to_recordset($1::text::jsonb) as x(s text, m text, t text, r double precision)
         on conflict (source_id, message_id) do nothing`,
        [JSON.stringify([...earliest.values()])],
      );
      for (const [k, e] of earliest) receivedAt.set(k, e.r);
    }
    return { receivedAt, existed };
  }

  /**
   * The delivery rows the batch changes, each written once: a stored event adds a `delivering`
   * row per destination it is routed to and gives its receive time to the rows made earlier from
   * attempts; the batch's attempts and deaths are folded into the state of each message at each
   * destination, from the row as stored (read only for messages that existed before the batch).
   */
  async #deliveries(
    tx: Sql,
    stored: StoredEvents,
    attempts: AttemptEntry[],
    deaths: DeadEntry[],
    messages: FactMessages,
  ): Promise<void> {
    type Step = { fact: Fact; attempt: boolean; error: string | null; deadReason?: string };
    type Delivery = {
      s: string;
      m: string;
      d: string;
      state: StateAt | undefined;
      received: number | undefined;
      count: number;
      lastError: string | null;
      deadReason: string | null;
      steps: Step[];
      changed: boolean;
    };
    const rows = new Map<string, Delivery>();
    const byMessage = new Map<string, Delivery[]>();
    const row = (s: string, m: string, d: string): Delivery => {
      const k = `${s}\u0000${m}\u0000${d}`;
      let r = rows.get(k);
      if (!r) {
        r = {
          s,
          m,
          d,
          state: undefined,
          received: undefined,
          count: 0,
          lastError: null,
          deadReason: null,
          steps: [],
          changed: false,
        };
        rows.set(k, r);
        const list = byMessage.get(`${s}\u0000${m}`) ?? [];
        list.push(r);
        byMessage.set(`${s}\u0000${m}`, list);
      }
      return r;
    };
    const touched = new Set<string>(stored.completed.keys());
    for (const f of [...attempts, ...deaths]) if (messages.existed.has(messageKey(f))) touched.add(messageKey(f));
    if (touched.size > 0) {
      const current = await rowsAsJson<Row>(
        tx,
        `select d.source_id, d.message_id, d.destination_id, d.state, d.state_at, d.received_at, d.attempts,
           d.last_error,
           d.dead_reason
         from deliveries d join jsonb_to_recordset($1::text::jsonb) as x(s text, m text)
           on d.source_id = x.s and d.message_id = x.m`,
        [
          JSON.stringify(
            [...touched].map((k) => ({ s: k.slice(0, k.indexOf('\u0000')), m: k.slice(k.indexOf('\u0000') + 1) })),
          ),
        ],
      );
      for (const c of current) {
        const r = row(String(c.source_id), String(c.message_id), String(c.destination_id));
        r.state = { state: c.state as DeliveryState, at: ms(c.state_at) };
        r.received = ms(c.received_at);
        r.count = Number(c.attempts);
        r.lastError = (c.last_error as string | null) ?? null;
        r.deadReason = (c.dead_reason as string | null) ?? null;
      }
    }
    for (const e of [...stored.inserted.values(), ...stored.completed.values()]) {
      for (const r of byMessage.get(messageKey(e)) ?? []) {
        if (r.received !== e.receivedAt) {
          r.received = e.receivedAt;
          r.changed = true;
        }
      }
      for (const d of e.destinationIds) {
        const r = row(e.sourceId, e.messageId, d);
        if (r.state !== undefined) continue;
        r.state = { state: 'delivering', at: e.receivedAt };
        r.received = e.receivedAt;
        r.changed = true;
      }
    }
    for (const a of attempts) {
      const error =
        a.outcome === 'success' ? null : (a.error ?? (a.status !== undefined ? `http_${a.status}` : 'failed'));
      row(a.sourceId, a.messageId, a.destinationId).steps.push({
        fact: { kind: 'attempt', outcome: a.outcome, at: a.at },
        attempt: true,
        error,
      });
    }
    for (const d of deaths) {
      row(d.sourceId, d.messageId, d.destinationId).steps.push({
        fact: { kind: 'dead', at: d.at },
        attempt: false,
        error: d.lastError ?? null,
        deadReason: d.reason,
      });
    }
    const writes = [];
    for (const r of rows.values()) {
      for (const step of r.steps.sort((a, b) => a.fact.at - b.fact.at)) {
        const next = advance(r.state, step.fact);
        if (step.attempt) r.count += 1;
        if (r.state === undefined || next.state !== r.state.state || next.at !== r.state.at) {
          if (step.error !== null) r.lastError = step.error;
          r.deadReason = next.state === 'dead' ? (step.deadReason ?? r.deadReason) : null;
        }
        r.state = next;
        r.changed = true;
      }
      if (!r.changed) continue;
      writes.push({
        s: r.s,
        m: r.m,
        d: r.d,
        state: r.state!.state,
        at: r.state!.at,
        r: r.received ?? messages.receivedAt.get(`${r.s}\u0000${r.m}`) ?? r.state!.at,
        n: r.count,
        e: r.lastError,
        dr: r.deadReason,
      });
    }
    if (writes.length === 0) return;
    await tx.query(
      `insert into deliveries (source_id, message_id, destination_id, state, state_at, received_at, attempts,
         last_error, dead_reason)
       select x.s, x.m, x.d, x.state, to_timestamp(x.at / 1000.0), to_timestamp(x.r / 1000.0), x.n, x.e, x.dr
       from jsonb_to_recordset($1::text::jsonb) as x(s text, m text, d text, state text, at double precision,
         r double precision, n int, e text, dr text)
       on conflict (source_id, message_id, destination_id) do update set state = excluded.state,
         state_at = excluded.state_at,
         received_at = excluded.received_at, attempts = excluded.attempts, last_error = excluded.last_error,
         dead_reason = excluded.dead_reason`,
      [JSON.stringify(writes)],
    );
  }

  /** Deletes messages received before `before` (epoch ms) with everything kept about them; returns how many. */
  prune(before: number): Promise<number> {
    return pruneBefore(this.sql, before);
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
