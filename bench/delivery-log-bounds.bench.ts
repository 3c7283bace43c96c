/**
 * Delivery-log bounds benchmark (docs/delivery-log.md, "Retention"; docs/operations.md, sizing):
 *
 * 1. Size cap, embedded database in memory: BENCH_MESSAGES messages of 1 KB (event + one attempt
 *    each) written through the log's store while the size check runs, under a size cap of
 *    BENCH_CAP_MIB and a stated RSS limit of BENCH_RSS_LIMIT_MIB (the run fails past it). Prints
 *    peak RSS, the tables' size, the messages evicted (sluice_delivery_log_evicted_total) and the
 *    rate, against a baseline in the same run: the same writes without a cap, for
 *    BENCH_BASELINE_MESSAGES messages (its RSS grows with every message).
 * 2. Pruning on PostgreSQL: BENCH_EXPIRED expired messages (with a delivery and an attempt each)
 *    are pruned, a tenth at a time, while fresh messages are ingested; the ingestion rate during
 *    the pruning is compared to the rate without pruning in windows alternated with it (≥ 90 %
 *    is the target).
 *
 *   node bench/delivery-log-bounds.bench.ts
 *   BENCH_MESSAGES=0 …         # the PostgreSQL part alone
 *   BENCH_ON_DISK=1 …          # the embedded database on a data directory (the Helm chart's default)
 *   BENCH_MESSAGES=1000000 BENCH_EXPIRED=1000000 BENCH_CAP_MIB=256 BENCH_RSS_LIMIT_MIB=768 node bench/...
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '@sluice/logging';
import { startLocalPostgres } from '@sluice/local-postgres';
import { Registry } from 'prom-client';
import {
  DeliveryLogMetrics,
  LogStore,
  migrate,
  openDatabase,
  Pruner,
  RETENTION_PACING,
  type Sql,
} from '@sluice/delivery-log';

type LogEntry = Parameters<LogStore['ingest']>[0][number];

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1_000_000);
const BASELINE_MESSAGES = Number(process.env.BENCH_BASELINE_MESSAGES ?? Math.min(MESSAGES, 150_000));
const EXPIRED = Number(process.env.BENCH_EXPIRED ?? 1_000_000);
const CAP = Number(process.env.BENCH_CAP_MIB ?? 256) * 1024 * 1024;
const RSS_LIMIT = Number(process.env.BENCH_RSS_LIMIT_MIB ?? 768) * 1024 * 1024;
/** The embedded database on a data directory (the Helm chart's default) instead of in memory. */
const ON_DISK = process.env.BENCH_ON_DISK === '1';
const BATCH = 1_000;
const MiB = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MiB`;

const logger = createLogger({ name: 'delivery-log-bounds-bench', level: 'error' });
const body = 'x'.repeat(900);

/** Message `i` of a run: a ~1 KB event and one successful attempt. */
function entries(run: string, from: number, count: number, receivedAt: (i: number) => number): LogEntry[] {
  const out: LogEntry[] = [];
  for (let i = from; i < from + count; i++) {
    const messageId = `${run}-${i}`;
    const envelope = { type: 'track', messageId, event: 'Order Completed', properties: { body } };
    const at = receivedAt(i);
    out.push(
      {
        kind: 'event',
        sourceId: 'bench',
        messageId,
        eventType: 'track',
        receivedAt: at,
        event: JSON.stringify(envelope),
        envelope,
        destinationIds: ['hooks'],
      },
      {
        kind: 'attempt',
        position: { topic: `${run}.attempts`, partition: i % 6, offset: String(i) },
        sourceId: 'bench',
        messageId,
        destinationId: 'hooks',
        eventType: 'track',
        endpoint: 'https://hooks.example.com/in',
        attempt: 1,
        outcome: 'success',
        status: 200,
        latencyMs: 5,
        at: at + 5,
        responseSnippet: 'ok',
      },
    );
  }
  return out;
}

/** Writes `count` messages into a fresh in-memory embedded database; with a cap, the size check runs every second. */
async function embedded(count: number, cap: number | undefined) {
  const dataDir = ON_DISK ? mkdtempSync(join(tmpdir(), 'sluice-dl-bench-')) : undefined;
  const sql = await openDatabase(dataDir ? { dataDir } : {});
  await migrate(sql);
  const store = new LogStore(sql);
  const registry = new Registry();
  const metrics = new DeliveryLogMetrics(registry);
  const pruner = new Pruner({
    sql,
    metrics,
    logger,
    now: Date.now,
    retentionMs: () => 30 * 24 * 3_600_000,
    intervalMs: 3_600_000,
    maxSizeBytes: () => cap,
  });
  const run = `b${Math.random().toString(36).slice(2, 6)}`;
  const start = Date.now();
  let peak = process.memoryUsage().rss;
  let lastCheck = performance.now();
  const t0 = performance.now();
  for (let i = 0; i < count; i += BATCH) {
    await store.ingest(entries(run, i, Math.min(BATCH, count - i), (n) => start + n));
    // The service checks on a timer; here the check runs between batches, once a second.
    if (cap !== undefined && performance.now() - lastCheck >= 1_000) {
      await pruner.checkSize();
      lastCheck = performance.now();
    }
    peak = Math.max(peak, process.memoryUsage().rss);
    if (peak > RSS_LIMIT) throw new Error(`RSS ${MiB(peak)} passed the limit of ${MiB(RSS_LIMIT)} after ${i} messages`);
    if (i % 100_000 === 0 && i > 0)
      console.error(`  ${i} messages, rss ${MiB(process.memoryUsage().rss)}, tables ${MiB(await store.size())}`);
  }
  const seconds = (performance.now() - t0) / 1_000;
  if (cap !== undefined) await pruner.checkSize();
  const size = await store.size();
  const [kept] = await sql.query<{ n: number }>('select count(*)::int as n from messages');
  const evicted = (await registry.getSingleMetric('sluice_delivery_log_evicted_total')!.get()).values[0]?.value ?? 0;
  await sql.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  return { rate: count / seconds, seconds, peak, size, kept: Number(kept!.n), evicted };
}

/** Ingestion rate (messages/s) of four concurrent writers until `done()` says stop. */
async function ingestUntil(store: LogStore, run: string, done: () => boolean, minSeconds: number) {
  let written = 0;
  const t0 = performance.now();
  const lane = async (l: number) => {
    for (let b = 0; !done() || performance.now() - t0 < minSeconds * 1_000; b++) {
      const from = (l * 1_000_000 + b) * 250;
      await store.ingest(entries(`${run}-${l}`, from, 250, () => Date.now()));
      written += 250;
    }
  };
  await Promise.all([0, 1, 2, 3].map(lane));
  return { rate: written / ((performance.now() - t0) / 1_000), written };
}

async function postgresPruning() {
  const server = await startLocalPostgres();
  try {
    const sql: Sql = await openDatabase({ url: server.url });
    await migrate(sql);
    const store = new LogStore(sql);
    const t0 = performance.now();
    const old = Date.now() - 30 * 24 * 3_600_000;
    for (let from = 0; from < EXPIRED; from += 100_000) {
      const range = [from, Math.min(EXPIRED, from + 100_000) - 1, new Date(old).toISOString()];
      await sql.query(
        `insert into messages (source_id, message_id, event_type, received_at, event)
         select 'old', 'msg-' || i, 'track', $3::timestamptz + (i || ' ms')::interval,
           jsonb_build_object('type', 'track', 'messageId', 'msg-' || i, 'properties', jsonb_build_object('body', repeat('x', 900)))
         from generate_series($1::int, $2::int) i`,
        range,
      );
      await sql.query(
        `insert into deliveries (source_id, message_id, destination_id, state, state_at, received_at, attempts)
         select 'old', 'msg-' || i, 'hooks', 'delivered', $3::timestamptz, $3::timestamptz + (i || ' ms')::interval, 1
         from generate_series($1::int, $2::int) i`,
        range,
      );
      await sql.query(
        `insert into attempts (topic, partition, record_offset, source_id, message_id, destination_id, endpoint, attempt, at, outcome, status, latency_ms)
         select 'old.attempts', 0, i, 'old', 'msg-' || i, 'hooks', 'https://hooks.example.com/in', 1,
           $3::timestamptz + (i || ' ms')::interval, 'success', 200, 5
         from generate_series($1::int, $2::int) i`,
        range,
      );
    }
    await sql.query('vacuum analyze');
    const fillSeconds = (performance.now() - t0) / 1_000;
    // Windows of ingestion alone and of ingestion while pruning, alternated, so that the other work
    // on the machine weighs on both alike: each pruning window deletes the next tenth of the
    // expired messages (they were received 1 ms apart), each alone window lasts as long as the
    // pruning window before it.
    const alone = { written: 0, seconds: 0 };
    const during = { written: 0, seconds: 0 };
    let pruned = 0;
    const steps = 10;
    let last = 10;
    for (let k = 1; k <= steps; k++) {
      const a = performance.now();
      const quiet = await ingestUntil(store, `alone-${k}`, () => true, last);
      alone.written += quiet.written;
      alone.seconds += (performance.now() - a) / 1_000;
      let pruning = true;
      const p0 = performance.now();
      const cut = old + Math.ceil((EXPIRED * k) / steps);
      const prune = store.prune(cut, { pauseRatio: RETENTION_PACING.pauseRatio }).then((n) => {
        pruned += n;
        pruning = false;
      });
      const busy = await ingestUntil(store, `prune-${k}`, () => !pruning, 0);
      await prune;
      last = (performance.now() - p0) / 1_000;
      during.written += busy.written;
      during.seconds += last;
    }
    const pruneSeconds = during.seconds;
    await sql.close();
    return {
      fillSeconds,
      alone: { ...alone, rate: alone.written / alone.seconds },
      during: { ...during, rate: during.written / during.seconds },
      pruned,
      pruneSeconds,
    };
  } finally {
    await server.stop();
  }
}

type EmbeddedRun = Awaited<ReturnType<typeof embedded>>;

/** One embedded run in a child process of its own, so each one's RSS is its own. */
function child(count: number, cap: number | undefined): Promise<EmbeddedRun> {
  return new Promise((resolve, reject) => {
    let out = '';
    const proc = spawn(process.execPath, [fileURLToPath(import.meta.url)], {
      env: { ...process.env, BENCH_CHILD: JSON.stringify({ count, cap }) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
    proc.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (code === 0 && line) resolve(JSON.parse(line) as EmbeddedRun);
      else reject(new Error(`embedded run exited ${code}: ${out.slice(-2_000)}`));
    });
  });
}

if (process.env.BENCH_CHILD) {
  const { count, cap } = JSON.parse(process.env.BENCH_CHILD) as { count: number; cap?: number };
  console.log(JSON.stringify(await embedded(count, cap)));
  process.exit(0);
}

console.log('\n== Sluice delivery-log bounds benchmark');
if (MESSAGES > 0) {
  const base = await child(BASELINE_MESSAGES, undefined);
  const capped = await child(MESSAGES, CAP);
  console.log(
    `embedded ${ON_DISK ? 'on disk' : 'in memory'}, no cap (baseline): ${BASELINE_MESSAGES} messages of 1 KB, ${base.rate.toFixed(0)} messages/s, peak RSS ${MiB(base.peak)}, tables ${MiB(base.size)} (${(base.size / BASELINE_MESSAGES).toFixed(0)} bytes/message)`,
  );
  console.log(
    `embedded ${ON_DISK ? 'on disk' : 'in memory'}, cap ${MiB(CAP)}: ${MESSAGES} messages of 1 KB, ${capped.rate.toFixed(0)} messages/s, peak RSS ${MiB(capped.peak)} (limit ${MiB(RSS_LIMIT)}), tables ${MiB(capped.size)}, kept ${capped.kept}, evicted ${capped.evicted} (sluice_delivery_log_evicted_total)`,
  );
  console.log(
    `ratio capped/baseline: rate ${((capped.rate / base.rate) * 100).toFixed(0)} %, peak RSS ${((capped.peak / base.peak) * 100).toFixed(0)} % for ${(MESSAGES / BASELINE_MESSAGES).toFixed(1)}x the messages`,
  );
}
if (EXPIRED > 0) {
  const pg = await postgresPruning();
  console.log(
    `postgres: ${EXPIRED} expired messages filled in ${pg.fillSeconds.toFixed(0)} s; pruned ${pg.pruned} in ${pg.pruneSeconds.toFixed(1)} s while ingesting (batches of ${RETENTION_PACING.batchRows} rows, pause ${RETENTION_PACING.pauseRatio}x each batch)`,
  );
  console.log(
    `ingestion alone:            ${pg.alone.rate.toFixed(0)} messages/s (${pg.alone.written} messages in ${pg.alone.seconds.toFixed(0)} s)`,
  );
  console.log(
    `ingestion while pruning:    ${pg.during.rate.toFixed(0)} messages/s (${pg.during.written} messages in ${pg.during.seconds.toFixed(0)} s)`,
  );
  console.log(`ratio during/alone:         ${((pg.during.rate / pg.alone.rate) * 100).toFixed(0)} % (target ≥ 90 %)`);
}
