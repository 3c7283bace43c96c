/**
 * Delivery-log benchmark (docs/delivery-log.md, "Performance"):
 *
 * 1. Ingestion: records/s the delivery log indexes from Kafka into its database, from topics
 *    filled beforehand with the pipeline's own mix (per event: its record on the events topic and
 *    one attempt record), against the end-to-end benchmark's delivered events/s measured in the
 *    same run (`bench/e2e.bench.ts` as a child, shortened): the log keeps up when its events/s
 *    (records/s ÷ 2) is above the pipeline's.
 * 2. Lookup: p50/p99 of a message lookup (event, deliveries, attempts) with 1,000,000 messages
 *    stored, generated straight into the database.
 *
 *   node bench/delivery-log.bench.ts      # provisions a local broker unless KAFKA_BROKERS is set
 *   BENCH_RECORDS=100000 BENCH_MESSAGES=1000000 BENCH_E2E_EVENTS=30000 BENCH_DATABASE=postgres ...
 *   BENCH_E2E_EVENTS=0 skips the end-to-end baseline.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { ConfigStore, parseConfig, readEnv } from '@sluice/config';
import type { AttemptEvent } from '@sluice/envelope';
import { createKafka, SafeProducer } from '@sluice/kafka';
import { startLocalKafka } from '@sluice/local-kafka';
import { e2eCall } from './lib/e2e-call.ts';
import { startLocalPostgres, type LocalPostgres } from '@sluice/local-postgres';
import { createLogger } from '@sluice/logging';
import { createMetricsRegistry } from '@sluice/service-kit';
import { createDeliveryLog, LogStore, migrate, openDatabase, type Sql } from '@sluice/delivery-log';
import { benchKafkaSecurity } from './lib/kafka-security.ts';
import { prefixedTopics, createTestTopics } from '@sluice/testkit';

const EVENTS = Number(process.env.BENCH_RECORDS ?? 100_000) / 2;
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1_000_000);
const E2E_EVENTS = Number(process.env.BENCH_E2E_EVENTS ?? 30_000);
const DATABASE = process.env.BENCH_DATABASE ?? 'embedded';
const LOOKUPS = 2_000;
const PARTITIONS = 6;

const env = readEnv();
const localBroker = env.kafkaBrokers ? undefined : await startLocalKafka();
const brokers = env.kafkaBrokers ?? [localBroker!.brokers];
const logger = createLogger({ name: 'delivery-log-bench', level: 'error' });
let postgres: LocalPostgres | undefined;

async function database(): Promise<Sql> {
  if (DATABASE !== 'postgres') return openDatabase({});
  postgres ??= await startLocalPostgres();
  const name = `bench_${randomBytes(3).toString('hex')}`;
  const admin = await openDatabase({ url: postgres.url });
  await admin.query(`create database ${name}`);
  await admin.close();
  return openDatabase({ url: postgres.url.replace(/\/postgres$/, `/${name}`) });
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** The shortened end-to-end benchmark in a child process: its delivered events/s. */
function e2eBaseline(): Promise<number | undefined> {
  if (E2E_EVENTS <= 0) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    let out = '';
    const child = spawn(process.execPath, ['bench/e2e.bench.ts'], {
      env: {
        ...process.env,
        KAFKA_BROKERS: brokers.join(','),
        BENCH_EVENTS: String(E2E_EVENTS),
        BENCH_LATENCY_SECONDS: '2',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.on('exit', (code) => {
      const m = /delivered end to end:\s+(\d+) events\/s/.exec(out);
      if (m) resolve(Number(m[1]));
      else reject(new Error(`e2e benchmark exited ${code} without a figure:\n${out.slice(-2_000)}`));
    });
  });
}

async function ingestion(): Promise<{ recordsPerSecond: number; records: number; seconds: number }> {
  const run = `bench-dl-${randomBytes(3).toString('hex')}`;
  const config = parseConfig({
    sources: [{ id: 'bench', writeKeys: ['bench-key'] }],
    destinations: [
      {
        id: 'hooks',
        type: 'webhooks',
        sourceIds: ['bench'],
        settings: { webhooks: [{ url: 'http://127.0.0.1:9/h' }] },
      },
    ],
    kafka: {
      ...benchKafkaSecurity().raw,
      clientId: run,
      partitions: PARTITIONS,
      replicationFactor: 1,
      topics: prefixedTopics(run),
    },
  });
  const kafka = createKafka({ brokers, clientId: run, logger, security: benchKafkaSecurity().security });
  await createTestTopics(kafka, config);
  const producer = new SafeProducer(kafka);
  await producer.connect();
  const now = Date.now();
  const CHUNK = 2_000;
  for (let i = 0; i < EVENTS; i += CHUNK) {
    const events = [];
    const attempts = [];
    for (let j = i; j < Math.min(EVENTS, i + CHUNK); j++) {
      const messageId = `${run}-${j}`;
      const key = `bench:user-${j % 1000}`;
      const at = new Date(now - 60_000 + j).toISOString();
      events.push({
        key,
        value: JSON.stringify({ sourceId: 'bench', ...e2eCall(messageId, j), timestamp: at, receivedAt: at }),
      });
      const attempt: AttemptEvent = {
        messageId,
        sourceId: 'bench',
        destinationId: 'hooks',
        eventType: 'track',
        endpoint: 'http://127.0.0.1:9/h',
        attempt: 1,
        outcome: 'success',
        status: 200,
        latencyMs: 3 + (j % 40),
        at,
        responseSnippet: 'ok',
      };
      attempts.push({ key, value: JSON.stringify(attempt) });
    }
    await producer.sendBatch([
      { topic: config.kafka.topics.events, messages: events },
      { topic: config.kafka.topics.attempts, messages: attempts },
    ]);
  }
  await producer.disconnect();

  const sql = await database();
  const registry = createMetricsRegistry('delivery-log');
  const ctx = { name: 'delivery-log', env, brokers, config: new ConfigStore(undefined, config), logger, registry };
  const service = await createDeliveryLog(ctx, { port: 0, sql }).start();
  const total = EVENTS * 2;
  const ingested = async () =>
    (await registry.getSingleMetric('sluice_delivery_log_ingested_total')?.get())?.values[0]?.value ?? 0;
  // Timed from the first record written, so the consumer group's join is not counted.
  let first: { at: number; count: number } | undefined;
  for (;;) {
    const count = await ingested();
    if (first === undefined && count > 0) first = { at: performance.now(), count };
    if (count >= total) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const seconds = (performance.now() - first!.at) / 1_000;
  const measured = total - first!.count;
  await service.close();
  await sql.close();
  return { recordsPerSecond: measured / seconds, records: measured, seconds };
}

async function lookups(): Promise<{ p50: number; p99: number; max: number; fillSeconds: number }> {
  const sql = await database();
  await migrate(sql);
  const store = new LogStore(sql);
  const t0 = performance.now();
  const STEP = 100_000;
  for (let from = 0; from < MESSAGES; from += STEP) {
    const to = Math.min(MESSAGES, from + STEP) - 1;
    const range = [from, to];
    await sql.query(
      `insert into messages (source_id, message_id, event_type, received_at, event)
       select 'src-' || (i % 20), 'msg-' || i, 'track', now() - (i || ' seconds')::interval,
         jsonb_build_object('type', 'track', 'messageId', 'msg-' || i, 'event', 'Order Completed', 'properties', jsonb_build_object('n', i))
       from generate_series($1::int, $2::int) i`,
      range,
    );
    await sql.query(
      `insert into deliveries (source_id, message_id, destination_id, state, state_at, received_at, attempts)
       select 'src-' || (i % 20), 'msg-' || i, 'hooks', case when i % 50 = 0 then 'dead' else 'delivered' end, now(), now() - (i || ' seconds')::interval, 2
       from generate_series($1::int, $2::int) i`,
      range,
    );
    await sql.query(
      `insert into attempts (topic, partition, record_offset, source_id, message_id, destination_id, endpoint, attempt, at, outcome, status, latency_ms)
       select 'attempts', 0, i * 2 + a, 'src-' || (i % 20), 'msg-' || i, 'hooks', 'https://hooks.example.com/in', a + 1, now(),
         case when a = 0 then 'retryable' else 'success' end, case when a = 0 then 503 else 200 end, 5 + (i % 50)
       from generate_series($1::int, $2::int) i, generate_series(0, 1) a`,
      range,
    );
  }
  await sql.query('analyze');
  const fillSeconds = (performance.now() - t0) / 1_000;
  const times: number[] = [];
  for (let n = 0; n < LOOKUPS; n++) {
    const i = Math.floor(Math.random() * MESSAGES);
    const t = performance.now();
    const m = await store.message(`src-${i % 20}`, `msg-${i}`);
    times.push(performance.now() - t);
    if (m?.attempts.length !== 2) throw new Error(`lookup of msg-${i} found ${m?.attempts.length} attempts`);
  }
  await sql.close();
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), max: times.at(-1)!, fillSeconds };
}

try {
  const e2e = await e2eBaseline();
  const ingest = await ingestion();
  const lookup = await lookups();
  const eventsPerSecond = ingest.recordsPerSecond / 2;
  console.log(
    `\n== Sluice delivery-log benchmark (database: ${DATABASE === 'postgres' ? 'PostgreSQL (local-postgres)' : 'embedded (PGlite, in memory)'})`,
  );
  console.log(
    `ingestion:              ${ingest.recordsPerSecond.toFixed(0)} records/s (${ingest.records} records in ${ingest.seconds.toFixed(1)} s) = ${eventsPerSecond.toFixed(0)} events/s (event + attempt each)`,
  );
  if (e2e !== undefined) {
    console.log(`pipeline (e2e bench):   ${e2e} delivered events/s (${E2E_EVENTS} events, same machine, same run)`);
    console.log(`ratio log/pipeline:     ${((eventsPerSecond / e2e) * 100).toFixed(0)} % (≥ 100 % keeps up)`);
  }
  console.log(
    `lookup, ${MESSAGES} messages: p50 ${lookup.p50.toFixed(2)} ms, p99 ${lookup.p99.toFixed(2)} ms, max ${lookup.max.toFixed(1)} ms over ${LOOKUPS} lookups (filled in ${lookup.fillSeconds.toFixed(0)} s)`,
  );
} finally {
  await postgres?.stop();
  await localBroker?.dispose();
}
