// Ingest throughput benchmark (not a test): events/s through POST /v1/batch against the raw
// ceiling of kafkajs sendBatch with the same payloads, acks=-1 and the same partitions.
//   node --import tsx bench/ingest.bench.ts      (KAFKA_BROKERS set, or a local broker is started)
// Env: BENCH_SECONDS (default 20), BENCH_CONNECTIONS (default 64), BENCH_PARTITIONS (default 6).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '@sluice/config';
import { createKafka, ensureTopics, SafeProducer, topicSpecs } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { startLocalKafka } from '@sluice/local-kafka';
import { percentile, runHttpLoad } from './lib/ingest-load.ts';
import { benchBatch, benchCall } from './lib/ingest-payload.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const PARTITIONS = Number(process.env.BENCH_PARTITIONS ?? 6);
const CALLS_PER_REQUEST = 100;
const WRITE_KEY = 'bench-write-key';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });

async function rawCeiling(brokers: string[], topic: string, seconds: number): Promise<{ events: number; seconds: number }> {
  const logger = createLogger({ name: 'bench', level: 'error' });
  const producer = new SafeProducer(createKafka({ brokers, clientId: 'bench-raw', logger }));
  await producer.connect();
  // The envelope ingest would write for each call: same bytes on the wire.
  const envelope = (i: number) => {
    const call = benchCall(i);
    const now = new Date().toISOString();
    return { key: `bench:${call.userId}`, value: JSON.stringify({ ...call, sourceId: 'bench', receivedAt: now, originalTimestamp: call.timestamp, context: { ...(call.context as object), ip: '127.0.0.1' } }) };
  };
  const perBatch = 1_000;
  const inFlight = 4;
  let events = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  // Built up front, so the ceiling measures kafkajs and the broker only.
  const pool = Array.from({ length: 20 * perBatch }, (_, i) => envelope(i));
  let n = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < deadline) {
        const start = (n++ % 20) * perBatch;
        const messages = pool.slice(start, start + perBatch);
        await producer.sendBatch([{ topic, messages }]);
        events += perBatch;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  await producer.disconnect();
  return { events, seconds: elapsed };
}

async function main() {
  const local = process.env.KAFKA_BROKERS ? undefined : await startLocalKafka();
  const brokers = process.env.KAFKA_BROKERS?.split(',') ?? [local!.brokers];
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  const raw = {
    sources: [{ id: 'bench', name: 'bench', writeKeys: [WRITE_KEY] }],
    kafka: {
      clientId: prefix,
      partitions: PARTITIONS,
      replicationFactor: 1,
      topics: { events: `${prefix}.events`, rejected: `${prefix}.rejected`, retry: `${prefix}.retry`, redeliver: `${prefix}.redeliver`, deadLetter: `${prefix}.dead-letter`, attempts: `${prefix}.attempts`, audiences: `${prefix}.audiences`, audienceState: `${prefix}.audience-state`, delayPrefix: `${prefix}.delay.` },
    },
    retry: { tiers: ['10s'] },
  };
  const config = parseConfig(raw);
  const admin = createKafka({ brokers, clientId: 'bench-admin', logger: createLogger({ name: 'bench', level: 'error' }) }).admin();
  await admin.connect();
  await ensureTopics(admin, topicSpecs(config));
  await ensureTopics(admin, [{ topic: `${prefix}.raw`, numPartitions: PARTITIONS, replicationFactor: 1 }]);
  await admin.disconnect();

  process.stdout.write(`raw kafkajs sendBatch ceiling (${SECONDS}s, ${PARTITIONS} partitions, acks=-1)...\n`);
  const ceiling = await rawCeiling(brokers, `${prefix}.raw`, SECONDS);

  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-'));
  const configPath = join(dir, 'config.json');
  writeFileSync(configPath, JSON.stringify(raw));
  const port = await freePort();
  const main = fileURLToPath(new URL('../services/ingest/src/main.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', main], {
    env: { ...process.env, KAFKA_BROKERS: brokers.join(','), SLUICE_CONFIG: configPath, INGEST_PORT: String(port), LOG_LEVEL: 'error' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const origin = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const ok = await fetch(`${origin}/readyz`).then((r) => r.ok, () => false);
    if (ok) break;
    if (i > 300) throw new Error('ingest did not become ready');
    await new Promise((r) => setTimeout(r, 100));
  }
  const headers = { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}` };
  // Pre-built bodies (fresh messageIds per body; rotating keeps building out of the measurement).
  const bodies = Array.from({ length: 200 }, (_, i) => benchBatch(CALLS_PER_REQUEST, i * CALLS_PER_REQUEST));
  let next = 0;
  const body = () => bodies[next++ % bodies.length]!;
  process.stdout.write(`warm-up (3s), then ${SECONDS}s of POST /v1/batch from ${CONNECTIONS} connections...\n`);
  await runHttpLoad({ origin, path: '/v1/batch', headers, body, callsPerRequest: CALLS_PER_REQUEST, connections: CONNECTIONS, seconds: 3 });
  const load = await runHttpLoad({ origin, path: '/v1/batch', headers, body, callsPerRequest: CALLS_PER_REQUEST, connections: CONNECTIONS, seconds: SECONDS });

  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  await local?.dispose();

  const rawRate = ceiling.events / ceiling.seconds;
  const ingestRate = load.events / load.seconds;
  const summary = [
    '',
    '== ingest benchmark ==',
    `payload          ${CALLS_PER_REQUEST} calls/request, ~${Math.round(bodies[0]!.length / CALLS_PER_REQUEST)} B/call, ${PARTITIONS} partitions, acks=-1, ${brokers.length === 1 && local ? 'local broker' : `brokers ${brokers.join(',')}`}`,
    `raw sendBatch    ${Math.round(rawRate).toLocaleString('en')} events/s (${ceiling.events} in ${ceiling.seconds.toFixed(1)} s)`,
    `ingest /v1/batch ${Math.round(ingestRate).toLocaleString('en')} events/s (${load.requests} requests in ${load.seconds.toFixed(1)} s, ${load.failures} failed, ${CONNECTIONS} connections)`,
    `ratio            ${((ingestRate / rawRate) * 100).toFixed(1)} % of the raw ceiling`,
    `latency          p50 ${percentile(load.latenciesMs, 50).toFixed(1)} ms, p99 ${percentile(load.latenciesMs, 99).toFixed(1)} ms`,
    '',
  ];
  process.stdout.write(summary.join('\n'));
}

await main();
