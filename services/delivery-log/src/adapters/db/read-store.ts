import {
  MAX_RENDERED_EVENT_BYTES,
  MAX_UNSTORED_SHOWN,
  MAX_VIEW_ATTEMPTS,
  MAX_VIEW_REJECTED,
  MAX_VIEW_REPLAYS,
} from '../../constants.ts';
import type { Cursor } from '../../domain/cursor.ts';
import { type RenderedEvent, renderEvent } from '../../domain/event-text.ts';
import type { DeliveryState } from '../../domain/state.ts';
import type { LedgerCutoff, LedgerQuery, LedgerRow, UnaccountedQuery } from '../../domain/ledger.ts';
import { type AttemptView, attemptView, type BatchView, readBatch } from './batch-view.ts';
import {
  type DestinationGauges,
  ledgerGauges,
  ledgerRows,
  type UnaccountedView,
  unaccountedPage,
} from './ledger-store.ts';
import type { Sql } from './database.ts';
import { idList, iso, ms, NO_DESTINATION, oneOf, type Row } from './sql-values.ts';

/** The columns of a stored event, bounded (`renderEvent`). */
const EVENT_COLUMNS = `left(event::text, ${MAX_RENDERED_EVENT_BYTES + 1}) as event_json,
  left(event_text, ${MAX_RENDERED_EVENT_BYTES + 1}) as event_text, event_note`;
const rendered = (r: Row): RenderedEvent =>
  renderEvent(
    (r.event_json as string | null) ?? null,
    (r.event_text as string | null) ?? null,
    (r.event_note as string | null) ?? null,
  );

export interface MessageFilter {
  sourceId?: string;
  /** Only messages of these sources (a tenant's, docs/reference/tenants.md); undefined: any source. */
  sourceIds?: readonly string[];
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

export interface MessageSummary {
  sourceId: string;
  messageId: string;
  eventType: string;
  receivedAt: string;
  deliveries: { destinationId: string | null; state: DeliveryState }[];
}

export interface ReplayView {
  requestedAt: string;
  destinationId: string | null;
  replayed: number;
  /** True when the replay was of a filter (`POST /api/v1/replays`) that matched this message. */
  bulk: boolean;
}

export interface MessageView extends MessageSummary, RenderedEvent {
  deliveries: DeliveryView[];
  /** The newest `MAX_VIEW_ATTEMPTS` attempts, oldest first. */
  attempts: AttemptView[];
  /** The newest `MAX_VIEW_REPLAYS` replays, oldest first. */
  replays: ReplayView[];
  /** The first `MAX_VIEW_REJECTED` rejected bodies, oldest first. */
  rejectedValues: string[];
  /** How many of each the log holds (the lists above are capped). */
  totals: { attempts: number; replays: number; rejectedValues: number };
  /** Records about the message the database refused (docs/delivery-log.md, "No record stops the log"). */
  unstored: { kind: string; reason: string; at: string }[];
  /** The trace id the event's record carried (`traceparent`), or null. */
  traceId: string | null;
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

/**
 * The read queries of the API and the console (docs/delivery-log.md, "API"): every answer bounded
 * (pages, capped lists with their totals).
 */
export class LogReader {
  readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** The ledger per source, destination and bucket of receive time (docs/delivery-log.md, "Ledger"). */
  ledger(q: LedgerQuery, cutoff: LedgerCutoff): Promise<LedgerRow[]> {
    return ledgerRows(this.sql, q, cutoff);
  }

  /** The ledger's gauges per destination, from the unsettled deliveries alone. */
  ledgerGauges(cutoff: LedgerCutoff): Promise<DestinationGauges[]> {
    return ledgerGauges(this.sql, cutoff);
  }

  /** The unaccounted deliveries, the longest unaccounted first, and how many there are. */
  unaccounted(q: UnaccountedQuery, cutoff: LedgerCutoff): Promise<{ total: number; unaccounted: UnaccountedView[] }> {
    return unaccountedPage(this.sql, q, cutoff);
  }

  /**
   * One message with its deliveries and, capped (`MAX_VIEW_*`), its attempts, replays and rejected
   * bodies, with how many of each the log holds.
   */
  async message(sourceId: string, messageId: string): Promise<MessageView | undefined> {
    const key = [sourceId, messageId];
    const [m] = await this.sql.query<Row>(
      `select m.event_type, m.received_at, m.trace_id, ${EVENT_COLUMNS},
         (select count(*) from attempts a where a.source_id = $1 and a.message_id = $2)::int as attempt_total,
         (select count(*) from replays r where r.source_id = $1 and r.message_id = $2)::int as replay_total,
         (select count(*) from rejections j where j.source_id = $1 and j.message_id = $2)::int as rejected_total
       from messages m where m.source_id = $1 and m.message_id = $2`,
      key,
    );
    if (!m) return undefined;
    const deliveries = await this.sql.query<Row>(
      'select * from deliveries where source_id = $1 and message_id = $2 order by destination_id',
      key,
    );
    const attempts = await this.sql.query<Row>(
      `select * from (select * from attempts where source_id = $1 and message_id = $2
         order by at desc, endpoint desc limit $3) a order by at, endpoint`,
      [...key, MAX_VIEW_ATTEMPTS],
    );
    const replays = await this.sql.query<Row>(
      `select * from (select * from replays where source_id = $1 and message_id = $2
         order by requested_at desc, id desc limit $3) r order by requested_at, id`,
      [...key, MAX_VIEW_REPLAYS],
    );
    const rejected = await this.sql.query<Row>(
      'select value from rejections where source_id = $1 and message_id = $2 order by at limit $3',
      [...key, MAX_VIEW_REJECTED],
    );
    const unstored = await this.sql.query<Row>(
      'select kind, reason, at from unstored where source_id = $1 and message_id = $2 order by at, id limit $3',
      [...key, MAX_UNSTORED_SHOWN],
    );
    return {
      sourceId,
      messageId,
      eventType: String(m.event_type),
      receivedAt: iso(ms(m.received_at)),
      traceId: (m.trace_id as string | null) ?? null,
      ...rendered(m),
      deliveries: deliveries.map(deliveryView),
      attempts: attempts.map(attemptView),
      replays: replays.map((r) => ({
        requestedAt: iso(ms(r.requested_at)),
        destinationId: (r.destination_id as string | null) ?? null,
        replayed: Number(r.replayed),
        bulk: r.bulk === true,
      })),
      rejectedValues: rejected.map((r) => String(r.value ?? '')),
      totals: {
        attempts: Number(m.attempt_total),
        replays: Number(m.replay_total),
        rejectedValues: Number(m.rejected_total),
      },
      unstored: unstored.map((u) => ({ kind: String(u.kind), reason: String(u.reason), at: iso(ms(u.at)) })),
    };
  }

  /** The events of one batch with their state (`readBatch`), or undefined when no attempt names it. */
  batch(batchId: string): Promise<BatchView | undefined> {
    return readBatch(this.sql, batchId);
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
    if (filter.sourceIds !== undefined) where.push(oneOf('m.source_id', p(idList(filter.sourceIds))));
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
  ): Promise<({ messageId: string; eventType: string; receivedAt: string } & RenderedEvent)[]> {
    const rows = await this.sql.query<Row>(
      `select message_id, event_type, received_at, ${EVENT_COLUMNS} from messages
       where source_id = $1 and (event is not null or event_note is not null)
       order by received_at desc, message_id desc limit $2`,
      [sourceId, limit],
    );
    return rows.map((r) => ({
      messageId: String(r.message_id),
      eventType: String(r.event_type),
      receivedAt: iso(ms(r.received_at)),
      ...rendered(r),
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
