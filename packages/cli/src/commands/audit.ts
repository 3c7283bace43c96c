import { ledgerAnswer, unaccountedAnswer } from '@sluice/log-api';
import type { CliIo } from '../io.ts';
import { logApiAnswer } from '../log-api.ts';

export interface AuditFlags {
  from?: string;
  to?: string;
  source?: string;
  destination?: string;
  json?: boolean;
}

const COLUMNS = ['source', 'destination', 'accepted', 'delivered', 'filtered', 'dead', 'in-flight', 'parked'];

const age = (s: number | null) =>
  s === null ? '-' : s < 120 ? `${s}s` : s < 7_200 ? `${Math.floor(s / 60)}m` : `${Math.floor(s / 3_600)}h`;

/** Left-aligned columns, two spaces apart. */
function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map(
      (r) =>
        `${r
          .map((c, i) => c.padEnd(widths[i]!))
          .join('  ')
          .trimEnd()}\n`,
    )
    .join('');
}

/**
 * `sluice audit`: the delivery log's ledger over a range of receive times (GET /api/v1/ledger) per
 * source and destination, and the deliveries unaccounted for now (GET /api/v1/ledger/unaccounted).
 */
export async function audit(io: CliIo, flags: AuditFlags): Promise<void> {
  // Only the totals are printed, and they do not depend on the bucket: the widest keeps any range
  // within the API's cap on buckets.
  const query = new URLSearchParams({ bucket: '24h' });
  for (const [name, value] of [
    ['from', flags.from],
    ['to', flags.to],
    ['sourceId', flags.source],
    ['destinationId', flags.destination],
  ] as const)
    if (value !== undefined) query.set(name, value);
  const ledger = await logApiAnswer(io, `/api/v1/ledger?${query}`, ledgerAnswer);
  const only = new URLSearchParams();
  if (flags.source !== undefined) only.set('sourceId', flags.source);
  if (flags.destination !== undefined) only.set('destinationId', flags.destination);
  const open = await logApiAnswer(io, `/api/v1/ledger/unaccounted?${only}`, unaccountedAnswer);
  if (flags.json) {
    io.stdout(`${JSON.stringify({ ledger, unaccounted: open })}\n`);
    return;
  }
  io.stdout(`ledger of events received from ${ledger.from} to ${ledger.to}\n`);
  io.stdout(
    table([
      [...COLUMNS, 'unaccounted', 'oldest-unsettled'],
      ...ledger.totals.map((t) => [
        t.sourceId,
        t.destinationId,
        ...[t.accepted, t.delivered, t.filtered, t.dead, t.inFlight, t.parked, t.unaccounted].map(String),
        age(t.oldestUnsettledAgeSeconds),
      ]),
    ]),
  );
  if (ledger.totals.length === 0) io.stdout('(no events received in this range)\n');
  io.stdout(
    `unaccounted now (unsettled, window started before ${ledger.unaccountedBefore}, not parked): ${open.total}\n`,
  );
  for (const u of open.unaccounted)
    io.stdout(
      `  ${u.sourceId}/${u.messageId} -> ${u.destinationId}  ${u.reason}: ${u.state} since ${u.stateAt}, ${u.attempts} attempts${u.lastError ? `, last error ${u.lastError}` : ''}\n`,
    );
  if (open.total > open.unaccounted.length)
    io.stdout(`  … and ${open.total - open.unaccounted.length} more (GET /api/v1/ledger/unaccounted)\n`);
}
