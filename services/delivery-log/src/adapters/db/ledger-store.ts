import type { UnaccountedDelivery, UnsettledState } from '@sluice/log-api';
import {
  type LedgerCutoff,
  type LedgerFigures,
  type LedgerFilter,
  type LedgerQuery,
  type LedgerRow,
  type UnaccountedQuery,
  unaccountedReason,
} from '../../domain/ledger.ts';
import { LEDGER_BOUNDS } from '../../constants.ts';
import { LedgerTooWideError } from '../../errors.ts';
import type { Sql } from './database.ts';
import { idList, iso, ms, NO_DESTINATION, oneOf, rowsAsJson } from './sql-values.ts';

/**
 * The ledger's statements (docs/delivery-log.md, "Ledger"), on both databases: figures by bucket of
 * receive time from `deliveries` (the index on `received_at`), and the unsettled deliveries alone
 * through the partial index `deliveries_unsettled`. The rules are `domain/ledger.ts`; the cutoff
 * and the exempt destinations come in as parameters (`$1` the cutoff, `$2` the exempt ones, `$3`
 * the parked ones, as JSON arrays: `jsonb ? text` is true for an element of the array).
 */

const UNSETTLED = `d.state in ('delivering', 'retrying')`;
const UNACCOUNTED = `${UNSETTLED} and d.window_from < to_timestamp($1::double precision / 1000.0)
  and not ($2::text::jsonb ? d.destination_id)`;
const PARKED = `${UNSETTLED} and ($3::text::jsonb ? d.destination_id)`;

const cutoffParams = (c: LedgerCutoff) => [
  c.before,
  JSON.stringify([...c.parked, ...c.resumed]),
  JSON.stringify(c.parked),
];

/**
 * Appends the optional source and destination filters, numbering their parameters after `params`:
 * the caller's destinations among them, so a tenant's rows are chosen by the statement itself.
 */
function filters(q: LedgerFilter, params: unknown[]): string {
  let where = '';
  if (q.destinationIds !== undefined) {
    params.push(idList(q.destinationIds));
    where += ` and ${oneOf('d.destination_id', `$${params.length}`)}`;
  }
  if (q.sourceId !== undefined) {
    params.push(q.sourceId);
    where += ` and d.source_id = $${params.length}`;
  }
  if (q.destinationId !== undefined) {
    params.push(q.destinationId);
    where += ` and d.destination_id = $${params.length}`;
  }
  return where;
}

const figures = (r: Record<string, unknown>): LedgerFigures => ({
  accepted: Number(r.accepted),
  delivered: Number(r.delivered),
  filtered: Number(r.filtered),
  dead: Number(r.dead),
  inFlight: Number(r.in_flight),
  parked: Number(r.parked),
  unaccounted: Number(r.unaccounted),
  oldestUnsettledAt: r.oldest === null || r.oldest === undefined ? null : ms(r.oldest),
});

/** What one ledger statement may read: `LEDGER_BOUNDS` unless a test shrinks them. */
export interface LedgerBounds {
  /** Embedded database: deliveries received in `from`–`to` read at most. */
  embeddedRows: number;
  /** PostgreSQL: the statement's `statement_timeout`. */
  statementTimeoutMs: number;
}

/**
 * The figures per source, destination and bucket of receive time in `from`–`to` (buckets aligned
 * to the epoch), within `bounds`: on the embedded database the deliveries of the range are counted
 * first, up to one past the bound, through the index on `received_at` (the filters are not counted
 * on, so what is read stays bounded whatever they select); on PostgreSQL the statement runs with
 * its own `statement_timeout`. Past either, `LedgerTooWideError`.
 */
export async function ledgerRows(
  sql: Sql,
  q: LedgerQuery,
  cutoff: LedgerCutoff,
  bounds: LedgerBounds = LEDGER_BOUNDS,
): Promise<LedgerRow[]> {
  if (sql.kind === 'embedded') {
    const [row] = await sql.query<{ n: number }>(
      `select count(*)::int as n from (select 1 from deliveries d
         where d.received_at >= to_timestamp($1::double precision / 1000.0)
           and d.received_at < to_timestamp($2::double precision / 1000.0) limit $3) x`,
      [q.from, q.to, bounds.embeddedRows + 1],
    );
    if (Number(row!.n) > bounds.embeddedRows)
      throw new LedgerTooWideError(
        `more than ${bounds.embeddedRows} deliveries were received from from to to: take a shorter range`,
      );
    return bucketRows(sql, q, cutoff);
  }
  try {
    return await sql.transaction(async (tx) => {
      await tx.query(`set local statement_timeout = ${Math.max(1, Math.floor(bounds.statementTimeoutMs))}`);
      return bucketRows(tx, q, cutoff);
    });
  } catch (err) {
    // 57014, query_canceled: the statement timeout.
    if ((err as { code?: unknown }).code === '57014')
      throw new LedgerTooWideError(
        `reading the deliveries from from to to took longer than ${bounds.statementTimeoutMs} ms: take a shorter range`,
        { cause: err },
      );
    throw err;
  }
}

async function bucketRows(sql: Sql, q: LedgerQuery, cutoff: LedgerCutoff): Promise<LedgerRow[]> {
  const params: unknown[] = [...cutoffParams(cutoff), q.from, q.to, q.bucketMs, NO_DESTINATION];
  const rows = await rowsAsJson<Record<string, unknown>>(
    sql,
    `select d.source_id, d.destination_id,
       floor(extract(epoch from d.received_at) * 1000 / $6::double precision) * $6::double precision as bucket,
       count(*) as accepted,
       count(*) filter (where d.state = 'delivered') as delivered,
       count(*) filter (where d.state = 'filtered') as filtered,
       count(*) filter (where d.state = 'dead') as dead,
       count(*) filter (where ${UNSETTLED}) as in_flight,
       count(*) filter (where ${PARKED}) as parked,
       count(*) filter (where ${UNACCOUNTED}) as unaccounted,
       min(d.received_at) filter (where ${UNSETTLED}) as oldest
     from deliveries d
     where d.received_at >= to_timestamp($4::double precision / 1000.0)
       and d.received_at < to_timestamp($5::double precision / 1000.0) and d.destination_id <> $7
       ${filters(q, params)}
     group by 1, 2, 3 order by 3, 1, 2`,
    params,
  );
  return rows.map((r) => ({
    sourceId: String(r.source_id),
    destinationId: String(r.destination_id),
    bucketStart: Number(r.bucket),
    ...figures(r),
  }));
}

export interface DestinationGauges {
  destinationId: string;
  inFlight: number;
  parked: number;
  unaccounted: number;
  oldestUnsettledAt: number | null;
}

/** Per destination, now: in flight, parked, unaccounted, the oldest unsettled. Reads only unsettled rows. */
export async function ledgerGauges(sql: Sql, cutoff: LedgerCutoff): Promise<DestinationGauges[]> {
  const rows = await rowsAsJson<Record<string, unknown>>(
    sql,
    `select d.destination_id, count(*) as in_flight, count(*) filter (where ${PARKED}) as parked,
       count(*) filter (where ${UNACCOUNTED}) as unaccounted, min(d.received_at) as oldest
     from deliveries d where ${UNSETTLED} group by d.destination_id`,
    cutoffParams(cutoff),
  );
  return rows.map((r) => ({
    destinationId: String(r.destination_id),
    inFlight: Number(r.in_flight),
    parked: Number(r.parked),
    unaccounted: Number(r.unaccounted),
    oldestUnsettledAt: r.oldest === null ? null : ms(r.oldest),
  }));
}

/** One unaccounted delivery as the API answers it (`@sluice/log-api`). */
export type UnaccountedView = UnaccountedDelivery;

/** The unaccounted deliveries, the longest unaccounted first, at most `limit`, with how many there are. */
export async function unaccountedPage(
  sql: Sql,
  q: UnaccountedQuery,
  cutoff: LedgerCutoff,
): Promise<{ total: number; unaccounted: UnaccountedView[] }> {
  const params: unknown[] = cutoffParams(cutoff).slice(0, 2);
  const where = `${UNACCOUNTED}${filters(q, params)}`;
  const [count] = await sql.query<{ n: number }>(`select count(*)::int as n from deliveries d where ${where}`, params);
  params.push(q.limit);
  const rows = await rowsAsJson<Record<string, unknown>>(
    sql,
    `select d.source_id, d.message_id, d.destination_id, d.state, d.state_at, d.received_at, d.window_from,
       d.attempts, d.last_error
     from deliveries d where ${where}
     order by d.window_from, d.source_id, d.message_id, d.destination_id limit $${params.length}`,
    params,
  );
  return {
    total: Number(count!.n),
    unaccounted: rows.map((r) => {
      const state = r.state as UnsettledState;
      return {
        sourceId: String(r.source_id),
        messageId: String(r.message_id),
        destinationId: String(r.destination_id),
        state,
        stateAt: iso(ms(r.state_at)),
        receivedAt: iso(ms(r.received_at)),
        windowFrom: iso(ms(r.window_from)),
        attempts: Number(r.attempts),
        lastError: (r.last_error as string | null) ?? null,
        ...unaccountedReason(state),
      };
    }),
  };
}
