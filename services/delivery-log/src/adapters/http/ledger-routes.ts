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

/** `GET /api/v1/ledger` and `GET /api/v1/ledger/unaccounted`. */
export function ledgerRoutes(deps: LedgerDeps): Route[] {
  return [
    {
      method: 'GET',
      pattern: /^\/api\/v1\/ledger$/,
      name: 'ledger',
      params: LEDGER_PARAMS,
      run: async (_m, url) => {
        const now = deps.now();
        const q = parseLedgerQuery(url.searchParams, now);
        if (!q.ok) throw badRequest(q);
        const cutoff = currentCutoff(deps);
        const rows = await deps.store.ledger(q.value, cutoff).catch((err: unknown) => {
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
            parkedDestinations: cutoff.parked,
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
      run: async (_m, url) => {
        const q = parseUnaccountedQuery(url.searchParams);
        if (!q.ok) throw badRequest(q);
        const cutoff = currentCutoff(deps);
        const page = await deps.store.unaccounted(q.value, cutoff);
        return [200, { unaccountedBefore: iso(cutoff.before), ...page } satisfies Unaccounted];
      },
    },
  ];
}
