/**
 * Runtime destinations at scale (docs/reference/runtime-destinations.md): the services that read
 * the catalog with many runtime destinations against a baseline of few, measured in the same run,
 * each size on topics of its own. BENCH_SIZES lists the sizes, the first being the baseline
 * (default `10,10000`).
 *
 *   node packages/local-kafka/src/cli.ts run -- node bench/runtime-destinations.bench.ts
 *   BENCH_SIZES=10,1000,10000 BENCH_SOURCES=100 BENCH_CHANGES=60 BENCH_EVENTS=20000 BENCH_PARTITIONS=1 ...
 *
 * Per size:
 *   1. The catalog: the destinations written straight to the catalog topic with `CatalogWriter`
 *      (many at a time, their records sent together: `CoalescingProducer`), keyring configured.
 *      One destination (`zz-hot`, the last id) takes the events of the hot source `s-bench`, at the
 *      receiver; the others spread over BENCH_SOURCES sources of the config file with 1–5
 *      endpoints each (bench/lib/catalog-load.ts).
 *   2. In this process, what every service does with the catalog: the V8 heap the catalog reader
 *      holds (after a GC), the merge with the file (`mergeDestinations`: the first, then one after a
 *      change), the routing index of the merged list, the deliverer's webhook-thread settings
 *      (`webhookThreadSettings`, built at every config change).
 *   3. The topics a start creates for the destinations in force, created and placed by the broker
 *      as the first service to start would create them, timed apart from the start-ups: none per
 *      destination (a parked topic is created at its destination's first park; only ordered
 *      destinations have a topic at start, and the catalog has none).
 *   4. Start-up: the deliverer, the retry service and the delivery log (the services that read the
 *      catalog; ingest does not), each its own process, one after the other: spawn → `/readyz` 200,
 *      or the reason it did not start (its own `kafka.startupTimeout`, 5 min by default, bounds the
 *      wait). For each one started: RSS (`VmRSS`, `VmHWM` of /proc) and V8 heap at ready and after
 *      BENCH_SETTLE_SECONDS, its idle CPU over that window, one `/metrics` scrape's size and time.
 *   5. Apply latency: BENCH_CHANGES changes (one destination's URLs replaced, one change at a time,
 *      BENCH_CHANGE_GAP_MS apart), each from its write's acknowledgement to the moment each started
 *      service put it in force: the time of its `config reloaded` log line (logged once the merge and
 *      every reload step are done; the services run with LOG_LEVEL=info), after which one scrape
 *      checks that `sluice_destination_catalog_applied_offset` is past the change's offset. Polling
 *      `/metrics` instead would load the services it measures: a scrape grows with the destinations
 *      (one is timed in 4). p50, p99, max.
 *   6. Deliverer throughput, if it started: BENCH_EVENTS events of the hot source (one destination
 *      at every size) produced at once, delivered to the receiver with the delivery log stopped (so
 *      it does not share the cores): events/s from the first to the last receipt, the deliverer's
 *      CPU µs per event.
 * Then `routeEvent` (packages/webhook/src/routing.ts) over every size's merged destinations, in this
 * process: ns per event of the hot source, in alternated blocks. Prints each size against the first.
 *
 * Parked topics have `kafka.partitions` partitions each: BENCH_PARTITIONS (default 1) makes a
 * catalog of 10,000 10,000 parked partitions on the one local broker rather than 60,000 (the default
 * 6). BENCH_CPU_PROFILE_DIR=<dir>: every service of the sizes after the first writes a V8 CPU profile
 * to <dir>/<size>-<service>.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJsonCodec } from '@sluice/codec';
import { type Destination, loadConfigFile, type SluiceConfig } from '@sluice/config';
import { webhookThreadSettings } from '@sluice/deliverer';
import { type CatalogReader, CatalogWriter, mergeDestinations, startCatalogReader } from '@sluice/destination-catalog';
import { recordKey } from '@sluice/envelope';
import { type Admin, createKafka, type Kafka, SafeProducer, StartupRetry, type TopicSpec } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { loadKeyring } from '@sluice/secret-keyring';
import { createTestTopics, metricSum, receivedEnvelope } from '@sluice/testkit';
import { topicSpecs } from '@sluice/topology';
import { routeEvent } from '@sluice/webhook';
import { ServiceProcess, type ServiceName, writeConfigFile } from '../test/support/service-process.ts';
import { benchBroker } from './lib/bench-broker.ts';
import {
  benchSources,
  CoalescingProducer,
  createAll,
  HOT_DESTINATION,
  HOT_SOURCE,
  hotDefinition,
  spreadDefinition,
  spreadId,
} from './lib/catalog-load.ts';
import { startProcessCpuWindow } from './lib/cpu-window.ts';
import { BENCH_EVENT } from './lib/ingest-payload.ts';
import { benchKafkaSecurity, benchKafkaSection } from './lib/kafka-security.ts';
import { rerunWithNodeFlags } from './lib/node-flags.ts';

// The catalog's heap is measured after a full GC.
rerunWithNodeFlags(['--expose-gc']);

const SIZES = (process.env.BENCH_SIZES ?? '10,10000').split(',').map(Number);
const SOURCES = Number(process.env.BENCH_SOURCES ?? 100);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 60);
const CHANGE_GAP_MS = Number(process.env.BENCH_CHANGE_GAP_MS ?? 100);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000);
const PARTITIONS = Number(process.env.BENCH_PARTITIONS ?? 1);
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 5);
const WRITE_CONCURRENCY = Number(process.env.BENCH_WRITE_CONCURRENCY ?? 500);
const CPU_PROFILE_DIR = process.env.BENCH_CPU_PROFILE_DIR;
const SERVICES: ServiceName[] = ['deliverer', 'retry', 'delivery-log'];
const KEY_VARIABLE = 'SLUICE_BENCH_KEYRING_K1';
const ADMIN_TOKEN = 'runtime-destinations-bench-admin-token-0123456789';
/** Topics per creation request of the benchmark's own (a parked topic is 3 controller records; a request takes 10,000). */
const TOPICS_PER_REQUEST = 1_000;

const logger = createLogger({ name: 'runtime-destinations-bench', level: process.env.LOG_LEVEL ?? 'error' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const gc = () => (globalThis as { gc?: () => void }).gc?.();

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

/** ms of `fn`, median of `runs`. */
function timed(fn: () => unknown, runs: number): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  return percentile(times, 50);
}

/** VmRSS and VmHWM of a process, in MiB (0 where /proc is missing). */
function memoryOf(pid: number): { rss: number; peak: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
  } catch {
    return { rss: 0, peak: 0 };
  }
}

interface Memory {
  rss: number;
  peak: number;
  /** V8 heap in use (`nodejs_heap_size_used_bytes`), MiB. */
  heap: number;
  /** V8 heap committed (`nodejs_heap_size_total_bytes`), MiB. */
  heapTotal: number;
  /** Memory of objects outside the V8 heap (`nodejs_external_memory_bytes`, Buffers among them), MiB. */
  external: number;
}

/**
 * One `/metrics` scrape: its text, and how long it took. A connection the service closed as it was
 * reused (its keep-alive timeout, 5 s, is the settle window) is tried again once, on a new one; a
 * service that exited is named with its last output.
 */
async function scrape(svc: ServiceProcess, tries = 2): Promise<{ text: string; ms: number }> {
  const t0 = performance.now();
  let res: Response;
  try {
    res = await fetch(`${svc.url}/metrics`);
  } catch (err) {
    if (svc.child!.exitCode !== null || svc.child!.signalCode !== null)
      throw new Error(`${svc.name} exited: ${svc.output.trim().split('\n').slice(-5).join('\n')}`);
    if (tries <= 1) throw err;
    return scrape(svc, tries - 1);
  }
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${svc.name} /metrics answered ${res.status}`);
  return { text, ms: performance.now() - t0 };
}

async function memory(svc: ServiceProcess): Promise<Memory> {
  const { text } = await scrape(svc);
  const mib = (name: string) => metricSum(text, name) / 2 ** 20;
  return {
    ...memoryOf(svc.child!.pid!),
    heap: mib('nodejs_heap_size_used_bytes'),
    heapTotal: mib('nodejs_heap_size_total_bytes'),
    external: mib('nodejs_external_memory_bytes'),
  };
}

/** When the service put each config in force from now on: the times of its `config reloaded` log lines. */
function follow(svc: ServiceProcess): number[] {
  const times: number[] = [];
  let rest = '';
  svc.child!.stdout!.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.includes('"config reloaded"')) continue;
      try {
        times.push(Date.parse((JSON.parse(line) as { time: string }).time));
      } catch {
        // not a log line
      }
    }
  });
  return times;
}

interface ServiceFigures {
  /** ms from spawn to `/readyz` 200; undefined when it did not start. */
  startMs?: number;
  /** Why it did not start, and after how long. */
  failure?: { ms: number; reason: string };
  atReady?: Memory;
  settled?: Memory;
  /** Cores used while idle, over the settle window. */
  idleCores?: number;
  /** One `/metrics` scrape after settling: KiB and ms. */
  scrape?: { kib: number; ms: number };
  /** ms from each change's acknowledgement to the service's applied offset passing it. */
  apply: number[];
  /** Changes the service had not applied within the wait (counted, left out of `apply`). */
  missed: number;
}

interface InProcess {
  /** V8 heap the catalog reader holds after a GC, MiB. */
  readerHeap: number;
  /** ms of the first merge with the file (every entry resolved), and of a merge after one change. */
  firstMerge: number;
  mergeAfterChange: number;
  /** ms to index the merged list by source (once per config in force). */
  routingIndex: number;
  /** ms of the deliverer's webhook-thread settings (every config change). */
  threadSettings: number;
}

interface SizeFigures {
  size: number;
  endpoints: number;
  recordBytes: number;
  writeSeconds: number;
  inProcess: InProcess;
  topics: number;
  topicsSeconds: number;
  services: Map<ServiceName, ServiceFigures>;
  burst?: { rate: number; delivered: number; cpuMicros: number };
  merged: Destination[];
}

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

async function startReceiver() {
  const child = fork(fileURLToPath(new URL('./lib/deliverer-receiver.ts', import.meta.url)), { execArgv: [] });
  const next = <T>() => new Promise<T>((resolve) => child.once('message', (m) => resolve(m as T)));
  const { port } = await next<{ port: number }>();
  return {
    origin: `http://127.0.0.1:${port}`,
    stats: async () => (child.send({ cmd: 'stats' }), next<{ count: number; firstAt: number; lastAt: number }>()),
    reset: async () => (child.send({ cmd: 'reset' }), next<unknown>()),
    stop: () => child.kill(),
  };
}

/** The message of the service's `failed to start` log line, else the last line of its output. */
function failureReason(output: string): string {
  for (const line of output.trim().split('\n').reverse()) {
    try {
      const entry = JSON.parse(line) as { msg?: string; err?: { type?: string; message?: string } };
      if (entry.msg?.endsWith('failed to start')) return `${entry.err?.type ?? 'Error'}: ${entry.err?.message ?? ''}`;
    } catch {
      // not a log line
    }
  }
  return output.trim().split('\n').at(-1)?.slice(0, 300) ?? '(no output)';
}

/** Spawns the service and polls `/readyz` every 20 ms: ms from spawn to the first 200, or why it stopped trying. */
async function timedStart(svc: ServiceProcess): Promise<{ ms: number } | { failed: number; reason: string }> {
  const t0 = performance.now();
  const child = await svc.spawn();
  const deadline = t0 + 900_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      return { failed: performance.now() - t0, reason: failureReason(svc.output) };
    try {
      const res = await fetch(`${svc.url}/readyz`);
      await res.body?.cancel();
      if (res.status === 200) return { ms: performance.now() - t0 };
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) {
      await svc.kill9();
      return { failed: performance.now() - t0, reason: 'not ready within 15 min' };
    }
    await sleep(20);
  }
}

/**
 * ms from the change's acknowledgement to the service's next config put in force (`reloads[seen]`),
 * once one scrape shows its applied offset past the change's; undefined after `timeoutMs`.
 */
async function appliedAfter(
  svc: ServiceProcess,
  reloads: number[],
  seen: number,
  change: { offset: number; ackAt: number },
  timeoutMs: number,
): Promise<number | undefined> {
  while (reloads.length <= seen) {
    if (Date.now() - change.ackAt > timeoutMs) return undefined;
    await sleep(5);
  }
  const applied = metricSum((await scrape(svc)).text, 'sluice_destination_catalog_applied_offset');
  if (applied <= change.offset)
    throw new Error(`${svc.name} reloaded its config, yet its applied offset ${applied} is not past ${change.offset}`);
  return reloads[seen]! - change.ackAt;
}

/** Creates the topics of `specs` not there yet, TOPICS_PER_REQUEST a request, and waits until the broker has placed every one. */
async function createAndPlace(admin: Admin, specs: TopicSpec[]): Promise<number> {
  const existing = new Set(await admin.listTopics());
  const missing = specs.filter((s) => !existing.has(s.topic));
  for (let i = 0; i < missing.length; i += TOPICS_PER_REQUEST)
    await admin.createTopics({ topics: missing.slice(i, i + TOPICS_PER_REQUEST), waitForLeaders: false });
  const topics = specs.map((s) => s.topic);
  const retry = new StartupRetry({ timeoutMs: 1_800_000 }).run;
  for (;;) {
    const meta = await retry('fetch topic metadata', () => admin.fetchTopicMetadata({ topics }));
    if (meta.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0)))
      return missing.length;
    await sleep(1_000);
  }
}

async function runSize(
  size: number,
  first: boolean,
  ctx: { brokers: string[]; dir: string; receiver: Receiver; kafka: Kafka },
): Promise<SizeFigures> {
  const prefix = `bench-rd${size}-${process.pid}-${Date.now()}`;
  const sources = benchSources(SOURCES);
  const configPath = writeConfigFile(join(ctx.dir, `sluice-${size}.yaml`), {
    sources: [...sources, HOT_SOURCE].map((id) => ({ id, writeKeys: [`wk-${id}`] })),
    destinations: [],
    kafka: benchKafkaSection(prefix, PARTITIONS),
    delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
    deliveryLog: { adminToken: ADMIN_TOKEN },
    runtimeDestinations: { keyring: [{ id: 'k1', key: { env: KEY_VARIABLE } }] },
  });
  const config = loadConfigFile(configPath);
  await createTestTopics(ctx.kafka, config);
  const topic = config.kafka.topics.destinations;
  const keyring = loadKeyring(config.runtimeDestinations!.keyring);
  const reader: CatalogReader = await startCatalogReader({
    kafka: ctx.kafka,
    topic,
    keyring,
    logger,
    retry: new StartupRetry({ timeoutMs: 60_000 }).run,
    groupPrefix: `${prefix}.bench-reader`,
  });
  await reader.ready;
  const safe = new SafeProducer(ctx.kafka);
  await safe.connect();
  const producer = new CoalescingProducer(safe);
  const file = { path: configPath, config };
  const writer = new CatalogWriter({ reader, producer, topic, context: () => ({ file, keyring }), timeoutMs: 120_000 });
  const running: ServiceProcess[] = [];
  try {
    // 1. The catalog.
    const spread = size - 1;
    const definitions = function* () {
      yield hotDefinition(ctx.receiver.origin);
      for (let i = 0; i < spread; i++) yield spreadDefinition(i, sources);
    };
    let endpoints = 0;
    for (const d of definitions()) endpoints += (d.settings as { webhooks: unknown[] }).webhooks.length;
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    const w0 = performance.now();
    await createAll(writer, definitions(), WRITE_CONCURRENCY);
    const writeSeconds = (performance.now() - w0) / 1000;
    console.log(`[${size}] catalog written: ${endpoints} endpoints in ${writeSeconds.toFixed(1)} s`);

    // 2. In this process: the reader's heap, the merge, the routing index, the webhook-thread settings.
    gc();
    const readerHeap = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
    let recordBytes = 0;
    for (const entry of reader.current().destinations.values())
      recordBytes += Buffer.byteLength(JSON.stringify(entry.definition));
    const t0 = performance.now();
    const merged = mergeDestinations(file, reader.current());
    const firstMerge = performance.now() - t0;
    if (merged.ignored.length > 0)
      throw new Error(`destinations ignored: ${JSON.stringify(merged.ignored.slice(0, 3))}`);
    const mergeAfterChange = timed(() => mergeDestinations(file, reader.current()), 9);
    const mergedConfig: SluiceConfig = { ...config, destinations: merged.destinations };
    const routingIndex = timed(
      () => routeEvent(receivedEnvelope({ sourceId: HOT_SOURCE }), [...merged.destinations]),
      9,
    );
    const threadSettings = timed(() => webhookThreadSettings(mergedConfig), 9);
    const inProcess = { readerHeap, firstMerge, mergeAfterChange, routingIndex, threadSettings };

    // 3. The topics a start creates for the destinations in force (none for unordered ones).
    const admin = ctx.kafka.admin();
    await admin.connect();
    const c0 = performance.now();
    const topics = await createAndPlace(admin, topicSpecs(mergedConfig)).finally(() => admin.disconnect());
    const topicsSeconds = (performance.now() - c0) / 1000;
    console.log(`[${size}] ${topics} topics created and placed in ${topicsSeconds.toFixed(1)} s`);

    // 4. Start-up, one service after the other.
    const figures = new Map<ServiceName, ServiceFigures>();
    for (const name of SERVICES) {
      const profile: Record<string, string> =
        CPU_PROFILE_DIR && !first
          ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${join(CPU_PROFILE_DIR, `${size}-${name}`)}` }
          : {};
      const svc = new ServiceProcess(name, {
        SLUICE_CONFIG: configPath,
        KAFKA_BROKERS: ctx.brokers.join(','),
        // `config reloaded` is logged at info: when each change is in force (5).
        LOG_LEVEL: 'info',
        ...profile,
      });
      const started = await timedStart(svc);
      if ('failed' in started) {
        figures.set(name, { failure: { ms: started.failed, reason: started.reason }, apply: [], missed: 0 });
        console.log(`[${size}] ${name} did not start (${(started.failed / 1000).toFixed(1)} s): ${started.reason}`);
        continue;
      }
      running.push(svc);
      figures.set(name, { startMs: started.ms, atReady: await memory(svc), apply: [], missed: 0 });
      console.log(`[${size}] ${name} ready in ${(started.ms / 1000).toFixed(2)} s`);
    }
    for (const svc of running) {
      const count = metricSum((await scrape(svc)).text, 'sluice_runtime_destinations');
      if (count !== size) throw new Error(`${svc.name} has ${count} runtime destinations in force, not ${size}`);
    }
    const idle = startProcessCpuWindow(Object.fromEntries(running.map((s) => [s.name, s.child!.pid!])));
    await sleep(SETTLE_SECONDS * 1000);
    const { seconds, cpu } = idle();
    for (const svc of running) {
      const f = figures.get(svc.name)!;
      f.idleCores = (cpu[svc.name] ?? NaN) / seconds;
      f.settled = await memory(svc);
      const { text, ms } = await scrape(svc);
      f.scrape = { kib: Buffer.byteLength(text) / 1024, ms };
    }

    // 5. Apply latency: one change at a time, from its acknowledgement to each service's config in force.
    const reloads = running.map(follow);
    const versions = new Map<string, number>();
    for (let c = 0; c < CHANGES && running.length > 0; c++) {
      const i = spread > 0 ? (c * 7919) % spread : -1;
      const id = i < 0 ? HOT_DESTINATION : spreadId(i);
      const version = (versions.get(id) ?? 0) + 1;
      versions.set(id, version);
      const definition = i < 0 ? hotDefinition(ctx.receiver.origin) : spreadDefinition(i, sources, version);
      // Wall-clock time, as the services' log lines have it.
      const acked = new Promise<{ offset: number; ackAt: number }>((resolve) => {
        producer.onAck = (offset) => {
          producer.onAck = undefined;
          resolve({ offset, ackAt: Date.now() });
        };
      });
      const seen = reloads.map((r) => r.length);
      const written = writer.replace({
        by: 'bench',
        at: Date.now(),
        id,
        expectedVersion: reader.versionOf(id),
        definition,
      });
      const change = await acked;
      const latencies = await Promise.all(
        running.map((svc, k) => appliedAfter(svc, reloads[k]!, seen[k]!, change, 30_000)),
      );
      const outcome = await written;
      if (outcome.kind !== 'updated') throw new Error(`change ${c} of ${id}: ${JSON.stringify(outcome)}`);
      running.forEach((svc, k) => {
        const f = figures.get(svc.name)!;
        const ms = latencies[k];
        if (ms === undefined) f.missed += 1;
        else f.apply.push(ms);
      });
      await sleep(CHANGE_GAP_MS * (0.5 + Math.random()));
    }

    // 6. Deliverer throughput: a burst of the hot source's events, the delivery log stopped.
    await running.find((s) => s.name === 'delivery-log')?.sigterm();
    const deliverer = running.find((s) => s.name === 'deliverer');
    const burst = deliverer ? await deliverBurst(ctx, config, deliverer) : undefined;
    return {
      size,
      endpoints,
      recordBytes,
      writeSeconds,
      inProcess,
      topics,
      topicsSeconds,
      services: figures,
      ...(burst && { burst }),
      merged: merged.destinations,
    };
  } finally {
    for (const svc of running) await svc.sigterm();
    await reader.close();
    await safe.disconnect();
  }
}

/** Warm-up events until they arrive, then EVENTS events at once: rate at the receiver and the deliverer's CPU per event. */
async function deliverBurst(
  ctx: { kafka: Kafka; receiver: Receiver },
  config: SluiceConfig,
  deliverer: ServiceProcess,
): Promise<{ rate: number; delivered: number; cpuMicros: number }> {
  const codec = createJsonCodec();
  const producer = ctx.kafka.producer();
  await producer.connect();
  let seq = 0;
  const produce = async (count: number) => {
    for (let i = 0; i < count; i += 1_000) {
      const messages = await Promise.all(
        Array.from({ length: Math.min(1_000, count - i) }, async () => {
          const n = seq++;
          const e = receivedEnvelope({
            ...BENCH_EVENT,
            sourceId: HOT_SOURCE,
            messageId: `rd-${n}`,
            userId: `user-${n % 1_000}`,
          });
          return { key: recordKey(e), value: await codec.encode(e) };
        }),
      );
      await producer.send({ topic: config.kafka.topics.events, messages });
    }
  };
  const waitFor = async (count: number, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const stats = await ctx.receiver.stats();
      if (stats.count >= count || Date.now() > deadline) return stats;
      await sleep(50);
    }
  };
  await ctx.receiver.reset();
  await produce(500);
  await waitFor(500, 120_000);
  await ctx.receiver.reset();
  const cpu = startProcessCpuWindow({ deliverer: deliverer.child!.pid! });
  await produce(EVENTS);
  const stats = await waitFor(EVENTS, 300_000);
  const used = cpu().cpu.deliverer ?? NaN;
  await producer.disconnect();
  return {
    rate: stats.count / ((stats.lastAt - stats.firstAt) / 1000),
    delivered: stats.count,
    cpuMicros: (used * 1e6) / stats.count,
  };
}

/** ns per `routeEvent` of a hot-source event over each list, median of alternated blocks (its index built once per list). */
function routingCost(lists: { size: number; destinations: Destination[] }[]): Map<number, number> {
  const events = Array.from({ length: 16 }, (_, i) =>
    receivedEnvelope({
      ...BENCH_EVENT,
      sourceId: HOT_SOURCE,
      messageId: `route-${i}`,
      userId: `user-${i}`,
      ...(i % 4 === 0 && { integrations: { All: true, [HOT_DESTINATION]: true } }),
    }),
  );
  const block = 200_000;
  const rounds = 7;
  const perEvent = new Map<number, number[]>(lists.map((l) => [l.size, []]));
  let found = 0;
  for (let r = 0; r < rounds; r++) {
    for (const { size, destinations } of r % 2 === 0 ? lists : [...lists].reverse()) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < block; i++) found += routeEvent(events[i & 15]!, destinations).length;
      perEvent.get(size)!.push(Number(process.hrtime.bigint() - t0) / block);
    }
  }
  if (found !== rounds * lists.length * block)
    throw new Error(`routing found ${found} destinations, not one per event`);
  return new Map([...perEvent].map(([size, ns]) => [size, percentile(ns, 50)]));
}

const fmt = (n: number | undefined, digits = 0) =>
  n !== undefined && Number.isFinite(n)
    ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '—';
const ratio = (value: number | undefined, base: number | undefined) =>
  value !== undefined && base !== undefined && base > 0 && Number.isFinite(value)
    ? `${(value / base).toFixed(2)}×`
    : '';

function report(
  results: SizeFigures[],
  routing: Map<number, number>,
  load0: number[],
  load1: number[],
  seconds: number,
) {
  const base = results[0]!;
  const width = 26;
  const row = (label: string, cell: (r: SizeFigures) => { text: string; value?: number }) => {
    const cells = results.map((r, k) => {
      const c = cell(r);
      const x = k === 0 ? '' : ratio(c.value, cell(base).value);
      return `${c.text}${x ? ` ${x}` : ''}`.padEnd(width);
    });
    console.log(`${label.padEnd(40)}${cells.join('')}`);
  };
  const svc = (r: SizeFigures, name: ServiceName) => r.services.get(name)!;
  console.log(
    `\n== Runtime destinations at scale: ${results.map((r) => fmt(r.size)).join(', ')} (the first is the baseline; ratios against it)`,
  );
  console.log(
    `machine: ${process.env.BENCH_MACHINE ?? '2 cores'}; load average ${load0.map((x) => x.toFixed(1)).join(' ')} at the start, ${load1.map((x) => x.toFixed(1)).join(' ')} at the end; ${seconds.toFixed(0)} s in all`,
  );
  console.log(
    `catalog: the hot source's one destination + the rest over ${SOURCES} sources with 1–5 endpoints each; kafka.partitions ${PARTITIONS}; ${CHANGES} changes`,
  );
  row('', (r) => ({ text: `${fmt(r.size)} destinations` }));
  row('endpoints', (r) => ({ text: fmt(r.endpoints), value: r.endpoints }));
  row('definitions (JSON, decrypted)', (r) => ({
    text: `${fmt(r.recordBytes / 2 ** 20, 2)} MiB`,
    value: r.recordBytes,
  }));
  row('catalog written (CatalogWriter)', (r) => ({ text: `${fmt(r.writeSeconds, 1)} s`, value: r.writeSeconds }));
  console.log('-- in this process (what each service holds and does)');
  row('  catalog reader heap', (r) => ({
    text: `${fmt(r.inProcess.readerHeap, 1)} MiB`,
    value: r.inProcess.readerHeap,
  }));
  row('  first merge with the file', (r) => ({
    text: `${fmt(r.inProcess.firstMerge, 1)} ms`,
    value: r.inProcess.firstMerge,
  }));
  row('  merge after a change', (r) => ({
    text: `${fmt(r.inProcess.mergeAfterChange, 2)} ms`,
    value: r.inProcess.mergeAfterChange,
  }));
  row('  routing index (per config)', (r) => ({
    text: `${fmt(r.inProcess.routingIndex, 2)} ms`,
    value: r.inProcess.routingIndex,
  }));
  row('  webhookThreadSettings (per config)', (r) => ({
    text: `${fmt(r.inProcess.threadSettings, 2)} ms`,
    value: r.inProcess.threadSettings,
  }));
  row('  routeEvent, hot source', (r) => ({ text: `${fmt(routing.get(r.size), 1)} ns`, value: routing.get(r.size) }));
  row('topics created and placed', (r) => ({
    text: `${fmt(r.topics)} in ${fmt(r.topicsSeconds, 1)} s`,
    value: r.topicsSeconds,
  }));
  for (const name of SERVICES) {
    console.log(`-- ${name}`);
    row('  start-up (spawn → /readyz 200)', (r) => {
      const f = svc(r, name);
      return f.failure
        ? { text: `FAILED after ${fmt(f.failure.ms / 1000, 1)} s` }
        : { text: `${fmt((f.startMs ?? NaN) / 1000, 2)} s`, value: f.startMs };
    });
    row('  RSS at ready', (r) => ({
      text: `${fmt(svc(r, name).atReady?.rss, 1)} MiB`,
      value: svc(r, name).atReady?.rss,
    }));
    row(`  RSS after ${SETTLE_SECONDS} s (peak)`, (r) => {
      const m = svc(r, name).settled;
      return { text: `${fmt(m?.rss, 1)} (${fmt(m?.peak, 0)}) MiB`, value: m?.rss };
    });
    row('  V8 heap used/total, external', (r) => {
      const m = svc(r, name).settled;
      return { text: `${fmt(m?.heap, 0)}/${fmt(m?.heapTotal, 0)}, ${fmt(m?.external, 0)} MiB`, value: m?.heap };
    });
    row('  idle CPU', (r) => ({ text: `${fmt(svc(r, name).idleCores, 3)} cores`, value: svc(r, name).idleCores }));
    row('  one /metrics scrape', (r) => {
      const s = svc(r, name).scrape;
      return { text: `${fmt(s?.kib, 0)} KiB, ${fmt(s?.ms, 1)} ms`, value: s?.ms };
    });
    row('  apply p50/p99/max', (r) => {
      const f = svc(r, name);
      if (f.apply.length === 0) return { text: '—' };
      const missed = f.missed > 0 ? ` (${f.missed} missed)` : '';
      return {
        text: `${fmt(percentile(f.apply, 50))}/${fmt(percentile(f.apply, 99))}/${fmt(Math.max(...f.apply))} ms${missed}`,
        value: percentile(f.apply, 99),
      };
    });
  }
  console.log(
    `-- deliverer, ${fmt(EVENTS)} events of the hot source (one destination at every size), delivery log stopped`,
  );
  row('  delivered', (r) => ({ text: `${fmt(r.burst?.rate)} events/s`, value: r.burst?.rate }));
  row('  deliverer CPU per event', (r) => ({ text: `${fmt(r.burst?.cpuMicros)} µs`, value: r.burst?.cpuMicros }));
  for (const r of results)
    for (const name of SERVICES) {
      const failure = svc(r, name).failure;
      if (failure) console.log(`${fmt(r.size)}: ${name} did not start: ${failure.reason}`);
    }
}

async function main() {
  const load0 = loadavg();
  const started = performance.now();
  process.env[KEY_VARIABLE] = randomBytes(32).toString('hex');
  const broker = await benchBroker();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-runtime-destinations-bench-'));
  const receiver = await startReceiver();
  const kafka = createKafka({
    brokers: broker.list,
    clientId: `runtime-destinations-bench-${process.pid}`,
    logger,
    security: benchKafkaSecurity().security,
  });
  const results: SizeFigures[] = [];
  try {
    for (const [k, size] of SIZES.entries())
      results.push(await runSize(size, k === 0, { brokers: broker.list, dir, receiver, kafka }));
  } finally {
    receiver.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const routing = routingCost(results.map((r) => ({ size: r.size, destinations: r.merged })));
  const load1 = loadavg();
  await broker.stop();
  report(results, routing, load0, load1, (performance.now() - started) / 1000);
}

await main();
process.exit(0);
