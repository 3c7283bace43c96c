import type { Ledger, Unaccounted } from '@sluice/log-api';
import {
  LEDGER_PARAMS,
  ledgerTotals,
  parseLedgerQuery,
  parseUnaccountedQuery,
  UNACCOUNTED_PARAMS,
} from '../../domain/ledger.ts';
import { LedgerTooWideError } from '../../errors.ts';
import { currentCutoff, type LedgerDeps } from '../db/ledger-monitor.ts';
import { iso } from '../db/sql-values.ts';
import { badRequest, HttpError, type Route } from './http-io.ts';
import { aimOf, scopeOf } from './tenant-scope.ts';

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
        const all = await deps.store.ledger(q.value, cutoff).catch((err: unknown) => {
          if (err instanceof LedgerTooWideError) throw new HttpError(400, 'invalid_parameter', err.message, 'from');
          throw err;
        });
        // A tenant's figures are its destinations' rows alone: no other tenant's count goes into a total.
        const rows = all.filter((r) => scope.seesDestination(r.destinationId));
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
        if (aimOf(scopeOf(req, deps.config()), q.value) === 'unseen')
          return [200, { unaccountedBefore: iso(cutoff.before), total: 0, unaccounted: [] } satisfies Unaccounted];
        const page = await deps.store.unaccounted(q.value, cutoff);
        return [200, { unaccountedBefore: iso(cutoff.before), ...page } satisfies Unaccounted];
      },
    },
  ];
}
