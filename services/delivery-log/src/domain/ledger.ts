import type { LedgerCounts, UnaccountedReason, UnsettledState } from '@sluice/log-api';
import { DEFAULT_PAGE_SIZE, MAX_LEDGER_BUCKETS, MAX_LEDGER_SPAN_MS, MAX_PAGE_SIZE } from '../constants.ts';
import { type Checked, checkId, checkInt, checkParams, checkTime, type Invalid } from './query.ts';

/**
 * The live ledger's rules (docs/delivery-log.md, "Ledger"), without a database: what counts as
 * settled, in flight, parked and unaccounted, and the inputs of its routes checked.
 *
 * A delivery (a message at a destination) is settled once `delivered`, `filtered` or `dead`. An
 * unsettled one (`delivering`, `retrying`) is in the retry path while its window runs: from its
 * receive time while nothing was attempted, from the first attempt of its run once retrying
 * (`windowFrom`). Past `retry.window` plus the grace, with no record settling it, it is
 * **unaccounted**: the pipeline should have delivered or dead-lettered it by then. Deliveries to a
 * parked destination (paused, disabled, or every endpoint so) are parked, not unaccounted: their
 * window does not run while they wait.
 */

/** The states that end a delivery's part of the ledger (the others: `UNSETTLED_STATES` of `@sluice/log-api`). */
export const SETTLED_STATES = ['delivered', 'filtered', 'dead'] as const;

export interface LedgerPolicy {
  /** `retry.window`: how long after its first attempt a delivery is retried (ms). */
  windowMs: number;
  /** `deliveryLog.ledger.grace`: time past the window before an unsettled delivery counts as unaccounted (ms). */
  graceMs: number;
}

/** What the log knows of a destination's runtime state (docs/reference/destination-states.md). */
export interface DestinationRun {
  destinationId: string;
  /** Paused or disabled, or every endpoint is: its events wait parked. */
  parked: boolean;
  /** Epoch ms it (or an endpoint) was last made active again, when the state records say. */
  resumedAt?: number;
}

/** Which unsettled deliveries are unaccounted right now. */
export interface LedgerCutoff {
  /** An unsettled delivery whose window runs from before this (epoch ms) is unaccounted… */
  before: number;
  /** …unless its destination is parked… */
  parked: string[];
  /**
   * …or was resumed less than window plus grace ago: a parked event's window moves later by the time
   * it waited, which the log does not see, and it waited no longer than until the resume.
   */
  resumed: string[];
}

/** The cutoff at `now`: the window and the grace, and the destinations exempt from it. */
export function ledgerCutoff(now: number, policy: LedgerPolicy, destinations: readonly DestinationRun[]): LedgerCutoff {
  const before = now - policy.windowMs - policy.graceMs;
  return {
    before,
    parked: destinations.filter((d) => d.parked).map((d) => d.destinationId),
    resumed: destinations
      .filter((d) => !d.parked && d.resumedAt !== undefined && d.resumedAt >= before)
      .map((d) => d.destinationId),
  };
}

export function unaccountedReason(state: UnsettledState): { reason: UnaccountedReason; message: string } {
  return state === 'delivering'
    ? {
        reason: 'never_attempted',
        message: 'accepted, but no attempt, retry or dead letter was recorded within the retry window and the grace',
      }
    : {
        reason: 'retry_stopped',
        message:
          'its last attempt failed, and no further attempt or dead letter was recorded within the retry window (from its first attempt) and the grace',
      };
}

/** The figures of one source and destination over a span of receive times. */
export interface LedgerFigures extends LedgerCounts {
  /** Epoch ms the oldest unsettled one was received; null when none is. */
  oldestUnsettledAt: number | null;
}

export interface LedgerRow extends LedgerFigures {
  sourceId: string;
  destinationId: string;
  /** Epoch ms the bucket starts (receive time). */
  bucketStart: number;
}

export const emptyFigures = (): LedgerFigures => ({
  accepted: 0,
  delivered: 0,
  filtered: 0,
  dead: 0,
  inFlight: 0,
  parked: 0,
  unaccounted: 0,
  oldestUnsettledAt: null,
});

/** Adds `b` into `a` (the oldest unsettled time is the earlier one). */
export function addFigures(a: LedgerFigures, b: LedgerFigures): LedgerFigures {
  const oldest = [a.oldestUnsettledAt, b.oldestUnsettledAt].filter((t): t is number => t !== null);
  return {
    accepted: a.accepted + b.accepted,
    delivered: a.delivered + b.delivered,
    filtered: a.filtered + b.filtered,
    dead: a.dead + b.dead,
    inFlight: a.inFlight + b.inFlight,
    parked: a.parked + b.parked,
    unaccounted: a.unaccounted + b.unaccounted,
    oldestUnsettledAt: oldest.length > 0 ? Math.min(...oldest) : null,
  };
}

/** The totals per source and destination of a range's buckets, sorted by source then destination. */
export function ledgerTotals(
  rows: readonly LedgerRow[],
): (LedgerFigures & { sourceId: string; destinationId: string })[] {
  const totals = new Map<string, LedgerFigures & { sourceId: string; destinationId: string }>();
  for (const r of rows) {
    const key = JSON.stringify([r.sourceId, r.destinationId]);
    const { sourceId, destinationId, bucketStart: _, ...figures } = r;
    const seen = totals.get(key);
    totals.set(key, { sourceId, destinationId, ...addFigures(seen ?? emptyFigures(), figures) });
  }
  return [...totals.values()].sort(
    (a, b) => a.sourceId.localeCompare(b.sourceId) || a.destinationId.localeCompare(b.destinationId),
  );
}

/** Which deliveries a ledger route reads: the source and destination it names, within the caller's destinations. */
export interface LedgerFilter {
  sourceId?: string;
  destinationId?: string;
  /** The destinations the caller sees (a tenant's); undefined: every one (the admin). */
  destinationIds?: readonly string[];
}

export interface LedgerQuery extends LedgerFilter {
  from: number;
  to: number;
  bucketMs: number;
}

export const LEDGER_PARAMS = ['from', 'to', 'bucket', 'sourceId', 'destinationId'];
export const UNACCOUNTED_PARAMS = ['sourceId', 'destinationId', 'limit'];
/** The range a ledger query covers without `from`, and its bucket without `bucket`. */
export const DEFAULT_LEDGER_SPAN_MS = 3_600_000;
export const DEFAULT_BUCKET_MS = 60_000;

const BUCKET = /^(\d{1,4})(m|h)$/;

function checkSource(params: URLSearchParams, out: { sourceId?: string; destinationId?: string }): Invalid | undefined {
  for (const field of ['sourceId', 'destinationId'] as const) {
    const c = checkId(field, params.get(field));
    if (!c.ok) return c;
    if (c.value !== undefined) out[field] = c.value;
  }
  return undefined;
}

/**
 * `GET /api/v1/ledger`: `from` and `to` (receive times; default the last hour up to `now`; at most
 * `MAX_LEDGER_SPAN_MS` apart), `bucket` (`1m`–`24h`, default `1m`; at most `MAX_LEDGER_BUCKETS`
 * buckets in the range), `sourceId`, `destinationId`.
 */
export function parseLedgerQuery(params: URLSearchParams, now: number): Checked<LedgerQuery> {
  const unknown = checkParams(params, LEDGER_PARAMS);
  if (unknown) return unknown;
  const to = checkTime('to', params.get('to'));
  if (!to.ok) return to;
  const from = checkTime('from', params.get('from'));
  if (!from.ok) return from;
  const query: LedgerQuery = { to: to.value ?? now, from: 0, bucketMs: DEFAULT_BUCKET_MS };
  query.from = from.value ?? query.to - DEFAULT_LEDGER_SPAN_MS;
  if (query.from >= query.to) return { ok: false, field: 'from', message: 'must be before to' };
  if (query.to - query.from > MAX_LEDGER_SPAN_MS)
    return {
      ok: false,
      field: 'from',
      message: `from–to spans more than ${MAX_LEDGER_SPAN_MS / 86_400_000} days: take a later from or an earlier to`,
    };
  const bucket = params.get('bucket');
  if (bucket !== null) {
    const m = BUCKET.exec(bucket);
    const ms = m ? Number(m[1]) * (m[2] === 'm' ? 60_000 : 3_600_000) : Number.NaN;
    if (!m || ms < 60_000 || ms > 86_400_000)
      return { ok: false, field: 'bucket', message: 'must be a duration from 1m to 24h, like 1m, 15m or 1h' };
    query.bucketMs = ms;
  }
  if ((query.to - query.from) / query.bucketMs > MAX_LEDGER_BUCKETS)
    return {
      ok: false,
      field: 'bucket',
      message: `gives more than ${MAX_LEDGER_BUCKETS} buckets over from–to: take a larger bucket or a shorter range`,
    };
  const bad = checkSource(params, query);
  return bad ?? { ok: true, value: query };
}

export interface UnaccountedQuery extends LedgerFilter {
  limit: number;
}

/** `GET /api/v1/ledger/unaccounted`: `sourceId`, `destinationId`, `limit` 1–200 (default 50). */
export function parseUnaccountedQuery(params: URLSearchParams): Checked<UnaccountedQuery> {
  const unknown = checkParams(params, UNACCOUNTED_PARAMS);
  if (unknown) return unknown;
  const limit = checkInt('limit', params.get('limit'), DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  if (!limit.ok) return limit;
  const query: UnaccountedQuery = { limit: limit.value };
  const bad = checkSource(params, query);
  return bad ?? { ok: true, value: query };
}
