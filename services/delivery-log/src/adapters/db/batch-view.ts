import { MAX_VIEW_BATCH_EVENTS } from '../../constants.ts';
import type { DeliveryState } from '../../domain/state.ts';
import type { Sql } from './database.ts';
import { iso, ms, type Row } from './sql-values.ts';

/** One attempt as the API shows it (a message's attempts, a batch's events). */
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
  /** The batch the event went in (docs/reference/batches.md); null for an attempt of one event alone. */
  batchId: string | null;
  /** How many events that batch held; null when not batched. */
  batchSize: number | null;
}

/** An attempt row of the `attempts` table as the API shows it. */
export function attemptView(a: Row): AttemptView {
  return {
    destinationId: String(a.destination_id),
    endpoint: String(a.endpoint),
    attempt: Number(a.attempt),
    at: iso(ms(a.at)),
    outcome: String(a.outcome),
    status: a.status === null ? null : Number(a.status),
    error: (a.error as string | null) ?? null,
    latencyMs: Number(a.latency_ms),
    responseSnippet: (a.response_snippet as string | null) ?? null,
    batchId: (a.batch_id as string | null) ?? null,
    batchSize: a.batch_size === null || a.batch_size === undefined ? null : Number(a.batch_size),
  };
}

/** One event of a batch: its attempt in that batch, and its delivery state at that destination now. */
export interface BatchEventView extends AttemptView {
  sourceId: string;
  messageId: string;
  /** null when the log has no delivery row for it (its event not read yet, or deleted). */
  state: DeliveryState | null;
}

export interface BatchView {
  batchId: string;
  /** The size the attempt records give the batch (the largest, should they differ); null when none says. */
  batchSize: number | null;
  /** The first `MAX_VIEW_BATCH_EVENTS` attempt rows of the batch, in time order. */
  events: BatchEventView[];
  /** How many attempt rows name the batch, and how many distinct events (message and destination) they are about. */
  totals: { attempts: number; events: number };
}

/**
 * The events of one batch (`GET /api/v1/batches/{batchId}`): every attempt row that names the
 * batch, with the event's state at that destination; undefined when no attempt names it.
 */
export async function readBatch(sql: Sql, batchId: string): Promise<BatchView | undefined> {
  const [t] = await sql.query<Row>(
    `select count(*)::int as attempts,
       count(distinct (source_id, message_id, destination_id))::int as events, max(batch_size) as batch_size
     from attempts where batch_id = $1`,
    [batchId],
  );
  if (!t || Number(t.attempts) === 0) return undefined;
  const rows = await sql.query<Row>(
    `select a.*, d.state from attempts a left join deliveries d on d.source_id = a.source_id
       and d.message_id = a.message_id and d.destination_id = a.destination_id
     where a.batch_id = $1 order by a.at, a.source_id, a.message_id, a.destination_id, a.endpoint limit $2`,
    [batchId, MAX_VIEW_BATCH_EVENTS],
  );
  return {
    batchId,
    batchSize: t.batch_size === null ? null : Number(t.batch_size),
    events: rows.map((r) => ({
      sourceId: String(r.source_id),
      messageId: String(r.message_id),
      state: (r.state as DeliveryState | null) ?? null,
      ...attemptView(r),
    })),
    totals: { attempts: Number(t.attempts), events: Number(t.events) },
  };
}
