// Ingest throughput benchmark (not a test): events/s through POST /v1/batch against the raw
// ceiling of kafkajs sendBatch with the same records, acks=-1 and the same partitions.
//   node bench/ingest.bench.ts      (KAFKA_BROKERS set, or a local broker is started)
// Both ingest and this process (raw ceiling, load generator) run with ingest's SERVICE_NODE_FLAGS.
// Env: BENCH_SECONDS (default 20; the raw ceiling runs half before and half after ingest),
// BENCH_CONNECTIONS (64), BENCH_PARTITIONS (6), BENCH_PRODUCERS (raw producer instances; default
// the same count ingest uses), BENCH_INGEST_NODE_FLAGS (extra node flags for the ingest process,
// e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"), BENCH_INGEST_MAIN (path of another checkout's
// services/ingest/src/main.ts, to compare versions).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '@sluice/config';
import { benchKafkaSecurity } from './lib/kafka-security.ts';
import { createKafka, ensureTopics, PRODUCER_THREAD_NAME } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { startLocalKafka } from '@sluice/local-kafka';
import { SERVICE_NODE_FLAGS } from '@sluice/service-kit';
import { INGEST_DEFAULTS } from '@sluice/ingest';
import { formatCpu, startCpuWindow } from './lib/cpu-window.ts';
import { ingestMeanBatchSize } from './lib/ingest-batch-size.ts';
import { percentile, runHttpLoad } from './lib/ingest-load.ts';
import { benchBatch } from './lib/ingest-payload.ts';
import { ingestRecords, rawCeiling } from './lib/ingest-raw.ts';
import { rerunWithNodeFlags } from './lib/node-flags.ts';
import { startThreadCpuWindow } from './lib/thread-cpu.ts';
import { freePort, prefixedTopics } from '@sluice/testkit';
import { topicSpecs } from '@sluice/topology';

// The raw ceiling runs in this process: give it the V8 flags ingest runs with (SERVICE_NODE_FLAGS).
rerunWithNodeFlags(SERVICE_NODE_FLAGS.ingest);

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const PARTITIONS = Number(process.env.BENCH_PARTITIONS ?? 6);
const PRODUCERS = Number(process.env.BENCH_PRODUCERS ?? INGEST_DEFAULTS.producers);
const CALLS_PER_REQUEST = 100;
const RAW_PER_BATCH = 1_000;
const RAW_IN_FLIGHT_PER_PRODUCER = 2;
const WRITE_KEY = 'bench-write-key';

async function main() {
  const local = process.env.KAFKA_BROKERS ? undefined : await startLocalKafka();
  const brokers = process.env.KAFKA_BROKERS?.split(',') ?? [local!.brokers];
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  const { raw: kafkaSecurity, security } = benchKafkaSecurity();
  const raw = {
    sources: [{ id: 'bench', name: 'bench', writeKeys: [WRITE_KEY] }],
    kafka: {
      ...kafkaSecurity,
      clientId: prefix,
      partitions: PARTITIONS,
      replicationFactor: 1,
      topics: prefixedTopics(prefix),
    },
    retry: { tiers: ['10s'] },
  };
  const config = parseConfig(raw);
  const admin = createKafka({
    brokers,
    clientId: 'bench-admin',
    logger: createLogger({ name: 'bench', level: 'error' }),
    security,
  }).admin();
  await admin.connect();
  await ensureTopics(admin, topicSpecs(config));
  await ensureTopics(admin, [{ topic: `${prefix}.raw`, numPartitions: PARTITIONS, replicationFactor: 1 }]);
  await admin.disconnect();

  // Pre-built request bodies (fresh messageIds per body), and the very records ingest writes for
  // them (same normalisation and codec, built outside the timed loops) for the raw ceiling.
  const bodies = Array.from({ length: 200 }, (_, i) => benchBatch(CALLS_PER_REQUEST, i * CALLS_PER_REQUEST));
  const records = await ingestRecords(bodies, 'bench', '127.0.0.1');
  const rawRun = () =>
    rawCeiling({
      brokers,
      security,
      topic: `${prefix}.raw`,
      records,
      seconds: SECONDS / 2,
      producers: PRODUCERS,
      perBatch: RAW_PER_BATCH,
      inFlightPerProducer: RAW_IN_FLIGHT_PER_PRODUCER,
    });

  process.stdout.write(
    `raw kafkajs sendBatch ceiling, first half (${SECONDS / 2}s, ${PRODUCERS} producer(s), ${PARTITIONS} partitions, acks=-1)...\n`,
  );
  const rawCpu1 = startCpuWindow();
  const raw1 = await rawRun();
  const rawCpuA = rawCpu1();

  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-'));
  const configPath = join(dir, 'config.json');
  writeFileSync(configPath, JSON.stringify(raw));
  const port = await freePort();
  // BENCH_INGEST_MAIN: another checkout's ingest main.ts, to compare versions under the same load.
  const main =
    process.env.BENCH_INGEST_MAIN || fileURLToPath(new URL('../services/ingest/src/main.ts', import.meta.url));
  const nodeFlags = (process.env.BENCH_INGEST_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS.ingest, ...nodeFlags, main], {
    env: {
      ...process.env,
      KAFKA_BROKERS: brokers.join(','),
      SLUICE_CONFIG: configPath,
      INGEST_PORT: String(port),
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const origin = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const ok = await fetch(`${origin}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (i > 300) throw new Error('ingest did not become ready');
    await new Promise((r) => setTimeout(r, 100));
  }
  const headers = {
    'content-type': 'application/json',
    authorization: `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`,
  };
  let next = 0;
  const body = () => bodies[next++ % bodies.length]!;
  process.stdout.write(`warm-up (3s), then ${SECONDS}s of POST /v1/batch from ${CONNECTIONS} connections...\n`);
  const loadShape = {
    origin,
    path: '/v1/batch',
    headers,
    body,
    callsPerRequest: CALLS_PER_REQUEST,
    connections: CONNECTIONS,
  };
  await runHttpLoad({ ...loadShape, seconds: 3 });
  const ingestCpu = startCpuWindow(child.pid);
  const ingestThreads = startThreadCpuWindow(child.pid!);
  const load = await runHttpLoad({ ...loadShape, seconds: SECONDS });
  const ingestCpuSplit = ingestCpu();
  const ingestThreadCpu = ingestThreads();
  // Records per sendBatch ingest made (its linger gathers concurrent requests), beside the raw's fixed size.
  const ingestBatch = await ingestMeanBatchSize(origin);

  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dir, { recursive: true, force: true });

  process.stdout.write(`raw kafkajs sendBatch ceiling, second half (${SECONDS / 2}s)...\n`);
  const rawCpu2 = startCpuWindow();
  const raw2 = await rawRun();
  const rawCpuB = rawCpu2();
  await local?.dispose();

  const rawRate = (raw1.events + raw2.events) / (raw1.seconds + raw2.seconds);
  const ingestRate = load.events / load.seconds;
  const rate = (r: { events: number; seconds: number }) => Math.round(r.events / r.seconds).toLocaleString('en');
  const summary = [
    '',
    '== ingest benchmark ==',
    `payload          ${CALLS_PER_REQUEST} calls/request, ~${Math.round(bodies[0]!.length / CALLS_PER_REQUEST)} B/call in, ~${Math.round(records.reduce((n, r) => n + (r.value as Buffer).length, 0) / records.length)} B/record out, ${PARTITIONS} partitions, acks=-1, ${local ? 'local broker' : `brokers ${brokers.join(',')}`}`,
    `raw sendBatch    ${Math.round(rawRate).toLocaleString('en')} events/s (before ${rate(raw1)}, after ${rate(raw2)}; ${PRODUCERS} producer(s) x ${RAW_IN_FLIGHT_PER_PRODUCER} sendBatch of ${RAW_PER_BATCH} outstanding)`,
    `ingest /v1/batch ${Math.round(ingestRate).toLocaleString('en')} events/s (${load.requests} requests in ${load.seconds.toFixed(1)} s, ${load.failures} failed, ${CONNECTIONS} connections)`,
    `ingest batches   ${ingestBatch === undefined ? '?' : Math.round(ingestBatch)} records per sendBatch on average (raw: ${RAW_PER_BATCH})`,
    `ratio            ${((ingestRate / rawRate) * 100).toFixed(1)} % of the raw ceiling`,
    `latency          p50 ${percentile(load.latenciesMs, 50).toFixed(1)} ms, p99 ${percentile(load.latenciesMs, 99).toFixed(1)} ms`,
    `cpu raw          ${formatCpu(rawCpuA)} (before), ${formatCpu(rawCpuB)} (after)`,
    `cpu ingest run   ${formatCpu(ingestCpuSplit)} (bench = load generator)`,
    `ingest threads   ${threadSplit(ingestThreadCpu, load.events)}`,
    `cpu per event    raw producer ${((1e6 * (rawCpuA.bench * raw1.seconds + rawCpuB.bench * raw2.seconds)) / (raw1.events + raw2.events)).toFixed(1)} µs, ingest process ${ingestCpuSplit.child === undefined ? '?' : ((1e6 * ingestCpuSplit.child) / ingestRate).toFixed(1)} µs, load generator ${((1e6 * ingestCpuSplit.bench) / ingestRate).toFixed(1)} µs`,
    '',
  ];
  process.stdout.write(summary.join('\n'));
}

/** µs of CPU per event of ingest's HTTP thread, producer thread, V8 helpers (GC) and the rest. */
function threadSplit(cpu: Map<string, number>, events: number): string {
  if (cpu.size === 0 || events === 0) return '?';
  // The producer thread is named (`PRODUCER_THREAD_NAME`); an unnamed worker (an older checkout) is `WorkerThread`.
  const named = ['MainThread', PRODUCER_THREAD_NAME, 'WorkerThread', 'V8Worker'];
  const us = (seconds: number) => ((1e6 * seconds) / events).toFixed(1);
  const rest = [...cpu].filter(([name]) => !named.includes(name)).reduce((n, [, s]) => n + s, 0);
  const producer = (cpu.get(PRODUCER_THREAD_NAME) ?? 0) + (cpu.get('WorkerThread') ?? 0);
  return `µs per event: HTTP thread ${us(cpu.get('MainThread') ?? 0)}, producer thread ${us(producer)}, V8 helpers ${us(cpu.get('V8Worker') ?? 0)}, other ${us(rest)}`;
}

await main();
