import type { Ledger, Unaccounted } from '@sluice/log-api';
import {
  LEDGER_PARAMS,
  type LedgerFilter,
  ledgerTotals,
  parseLedgerQuery,
  parseUnaccountedQuery,
  UNACCOUNTED_PARAMS,
} from '../../domain/ledger.ts';
import { LedgerTooWideError } from '../../errors.ts';
import { currentCutoff, type LedgerDeps } from '../db/ledger-monitor.ts';
import { iso } from '../db/sql-values.ts';
import { badRequest, HttpError, type Route } from './http-io.ts';
import { aimedAt, scopeOf, type TenantScope } from './tenant-scope.ts';

/** A ledger query held to the destinations the caller sees (all of them for the admin). */
const withinScope = <Q extends LedgerFilter>(q: Q, scope: TenantScope): Q =>
  scope.destinationIds === undefined ? q : { ...q, destinationIds: scope.destinationIds };

/** `GET /api/v1/ledger` and `GET /api/v1/ledger/unaccounted`. */
export function ledgerRoutes(deps: LedgerDeps): Route[] {
  return [
    {
      method: 'GET',
      pattern: /^\/api\/v1\/ledger$/,
      name: 'ledger',
      params: LEDGER_PARAMS,
      run: async (_m, url, req) => {
        const now = deps.now();
        const q = parseLedgerQuery(url.searchParams, now);
        if (!q.ok) throw badRequest(q);
        const scope = scopeOf(req, deps.config());
        const cutoff = currentCutoff(deps);
        // A tenant's figures are its destinations' rows alone, chosen by the query: no other tenant's count goes into a total.
        const rows = await deps.store.ledger(withinScope(q.value, scope), cutoff).catch((err: unknown) => {
          if (err instanceof LedgerTooWideError) throw new HttpError(400, 'invalid_parameter', err.message, 'from');
          throw err;
        });
        const oldest = (at: number | null) => ({
          oldestUnsettledAt: at === null ? null : iso(at),
          oldestUnsettledAgeSeconds: at === null ? null : Math.max(0, Math.round((now - at) / 1000)),
        });
        return [
          200,
          {
            from: iso(q.value.from),
            to: iso(q.value.to),
            bucketSeconds: q.value.bucketMs / 1000,
            unaccountedBefore: iso(cutoff.before),
            parkedDestinations: cutoff.parked.filter((id) => scope.seesDestination(id)),
            totals: ledgerTotals(rows).map((t) => ({ ...t, ...oldest(t.oldestUnsettledAt) })),
            buckets: rows.map((r) => ({ ...r, bucketStart: iso(r.bucketStart), ...oldest(r.oldestUnsettledAt) })),
          } satisfies Ledger,
        ];
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/v1\/ledger\/unaccounted$/,
      name: 'ledgerUnaccounted',
      params: UNACCOUNTED_PARAMS,
      run: async (_m, url, req) => {
        const q = parseUnaccountedQuery(url.searchParams);
        if (!q.ok) throw badRequest(q);
        const cutoff = currentCutoff(deps);
        const scope = scopeOf(req, deps.config());
        // Another tenant's destination or source answers as one with nothing unaccounted; neither
        // named, every destination the caller sees.
        if (aimedAt(scope, q.value) === 'unseen')
          return [200, { unaccountedBefore: iso(cutoff.before), total: 0, unaccounted: [] } satisfies Unaccounted];
        const page = await deps.store.unaccounted(withinScope(q.value, scope), cutoff);
        return [200, { unaccountedBefore: iso(cutoff.before), ...page } satisfies Unaccounted];
      },
    },
  ];
}
