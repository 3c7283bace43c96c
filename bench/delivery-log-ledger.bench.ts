/**
 * Delivery-log ledger benchmark (docs/delivery-log.md, "Ledger"): what the ledger's statements cost
 * with many deliveries stored, generated straight into the database (no broker):
 *
 * - the gauges (`ledgerGauges`, every `deliveryLog.ledger.interval`): reads the unsettled deliveries
 *   alone, through the partial index `deliveries_unsettled`, whatever the number of settled ones;
 * - the unaccounted page (`GET /api/v1/ledger/unaccounted`);
 * - the figures of the last hour by the minute (`GET /api/v1/ledger`): reads that hour's deliveries.
 *
 *   node bench/delivery-log-ledger.bench.ts
 *   BENCH_DELIVERIES=500000 BENCH_UNSETTLED=0.01 BENCH_DATABASE=postgres node bench/delivery-log-ledger.bench.ts
 */
import { randomBytes } from 'node:crypto';
import { LogStore, migrate, openDatabase, type Sql } from '@sluice/delivery-log';
import { startLocalPostgres, type LocalPostgres } from '@sluice/local-postgres';

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 300_000);
/** Share of the deliveries left unsettled (half never attempted, half retrying). */
const UNSETTLED = Number(process.env.BENCH_UNSETTLED ?? 0.01);
const DATABASE = process.env.BENCH_DATABASE ?? 'embedded';
/** Receive times spread over this span before now. */
const SPAN_MS = 24 * 3_600_000;
const RUNS = 20;

let postgres: LocalPostgres | undefined;
async function database(): Promise<Sql> {
  if (DATABASE !== 'postgres') return openDatabase({});
  postgres = await startLocalPostgres();
  const name = `bench_${randomBytes(3).toString('hex')}`;
  const admin = await openDatabase({ url: postgres.url });
  await admin.query(`create database ${name}`);
  await admin.close();
  return openDatabase({ url: postgres.url.replace(/\/postgres$/, `/${name}`) });
}

const sql = await database();
await migrate(sql);
const store = new LogStore(sql);
const now = Date.now();
const every = Math.max(2, Math.round(1 / UNSETTLED));
const STEP = 50_000;
for (let from = 0; from < DELIVERIES; from += STEP) {
  await sql.query(
    `insert into deliveries (source_id, message_id, destination_id, state, state_at, received_at, attempts, window_from)
     select 'web', 'm' || i, case when i % 2 = 0 then 'hooks' else 'crm' end,
       case when i % $3 = 0 then 'delivering' when i % $3 = 1 then 'retrying' else 'delivered' end,
       to_timestamp(($4 - (i::double precision * $5 / $6)) / 1000.0),
       to_timestamp(($4 - (i::double precision * $5 / $6)) / 1000.0), 1,
       to_timestamp(($4 - (i::double precision * $5 / $6)) / 1000.0)
     from generate_series($1::int, $2::int) i`,
    [from, Math.min(DELIVERIES, from + STEP) - 1, every, now, SPAN_MS, DELIVERIES],
  );
}
await sql.query('analyze');

async function time(name: string, work: () => Promise<unknown>): Promise<void> {
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await work();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  const p50 = ms[Math.floor(RUNS / 2)]!;
  console.log(`${name}: p50 ${p50.toFixed(1)} ms, max ${ms.at(-1)!.toFixed(1)} ms (${RUNS} runs)`);
}

const cutoff = { before: now - 4 * 3_600_000 - 15 * 60_000, parked: [], resumed: [] };
const [{ n: unsettled } = { n: 0 }] = await sql.query<{ n: number }>(
  "select count(*)::int as n from deliveries where state in ('delivering', 'retrying')",
);
console.log(
  `delivery-log ledger bench: ${DATABASE}, ${DELIVERIES} deliveries over 24 h, ${unsettled} unsettled, ` +
    `load average ${(await import('node:os'))
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
);
await time('gauges (every unsettled delivery, per destination)', () => store.ledgerGauges(cutoff));
await time('unaccounted page (50, with the total)', () => store.unaccounted({ limit: 50 }, cutoff));
await time('ledger, last hour by the minute', () =>
  store.ledger({ from: now - 3_600_000, to: now, bucketMs: 60_000 }, cutoff),
);
await time('ledger, 24 h by the hour', () =>
  store.ledger({ from: now - SPAN_MS, to: now, bucketMs: 3_600_000 }, cutoff),
);
await sql.close();
await postgres?.stop();
