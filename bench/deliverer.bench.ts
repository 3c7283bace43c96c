/**
 * Deliverer throughput against the raw undici ceiling.
 *
 *   KAFKA_BROKERS=127.0.0.1:29092 node bench/deliverer.bench.ts
 *
 * Without KAFKA_BROKERS a local broker is started with `startLocalKafka()`. Phases 1–4 POST the
 * same body to the same receiver (a separate process answering 200 at once) with the same number
 * of keep-alive connections and the same number of requests in flight.
 *   1. raw: an undici Pool, BENCH_RAW_REQUESTS POSTs.
 *   2. deliverer: BENCH_EVENTS events pre-filled on `sluice.events`, delivered by the real service
 *      (consume, decode, route, render, sign, POST, record attempts on Kafka, commit).
 *   3. floor: the least any kafkajs + undici deliverer does — a plain kafkajs consumer (own group,
 *      same topic, `partitionsConsumedConcurrently` = partitions) POSTing each record's value with
 *      the same Pool settings and in-flight cap; no decode, render, signing, attempt records or
 *      per-record bookkeeping. Its rate bounds what any deliverer can reach on this machine.
 *   4. minimal deliverer: the least a deliverer that meets docs/reference/delivery.md does — phase 3 with many records
 *      in flight per partition (`ConcurrentConsumer`) plus the one attempt record per POST the spec
 *      requires on `sluice.attempts` (in-process idempotent producer, acks=-1, gathered for
 *      BENCH_ATTEMPT_LINGER ms, default 10, the cheapest per record), acknowledged before the
 *      offset is committed. Its rate and CPU per webhook bound what a conforming deliverer reaches.
 *   5. side records alone: the deliverer's side-record path (RecordBatcher with the 2 ms linger on a
 *      one-producer ProducerThread) fed attempt-sized records at BENCH_SIDE_RECORD_RATE a second
 *      (default 30,000, what batched delivery asks of it) for BENCH_SIDE_RECORD_SECONDS (3), once
 *      per interval below: records per sendBatch, CPU per record of the producer thread and of the
 *      main thread, and the acknowledgement latency.
 * Phases 2 and 5 run once per side-record interval in BENCH_SIDE_RECORD_INTERVALS (default "0,10": the
 * deliverer's attempt records leaving as soon as the previous batch is acknowledged, then at most
 * every 10 ms, its default), each with its own consumer group on the same events.
 * Prints webhooks/s of phases 1–4 (each counted at the receiver, first to last request), the ratios,
 * p99 latency of one attempt, and the CPU time this process spent per webhook in each phase
 * (steadier than the rates when other work shares the machine); for each deliverer run also the
 * attempt records per `sendBatch` and the producer thread's CPU per record.
 * This process runs with the deliverer's SERVICE_NODE_FLAGS (it re-runs itself under them).
 * Knobs: BENCH_EVENTS, BENCH_RAW_REQUESTS, BENCH_CONNECTIONS, BENCH_IN_FLIGHT,
 * BENCH_PER_PARTITION (`delivery.maxInFlightPerPartition`, default the config's 128), BENCH_ATTEMPT_LINGER,
 * BENCH_SIDE_RECORD_INTERVALS, BENCH_SIDE_RECORD_RATE, BENCH_SIDE_RECORD_SECONDS, BENCH_SIDE_RECORD_LINGER,
 * BENCH_CPU_PROFILE=<file> (a CPU profile of the deliverer phase only), BENCH_BATCH=<maxEvents> (the
 * deliverer phase in batches; its rate and CPU are then per event), BENCH_FILTER=<rounds> (the cost of a filter:
 * the deliverer phase is run 4 × rounds more times over the same events, without and with a 10-condition
 * `filter` that every event passes, each round in the order none, filter, filter, none so that warm-up
 * and drift weigh on both alike; prints the rate and CPU per webhook of each, the filter's ratios of
 * the means, and the evaluator's own time per event).
 */
import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { createJsonCodec } from '@sluice/codec';
import { recordKey } from '@sluice/envelope';
import { filterAccepts, parseFilter } from '@sluice/event-filter';
import type { SluiceConfig } from '@sluice/config';
import {
  ConcurrentConsumer,
  createKafka,
  PRODUCER_THREAD_NAME,
  RecordBatcher,
  SafeProducer,
  type ConsumedRecord,
  type Kafka,
} from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { createTestTopics, metricSum, receivedEnvelope, testConfig, testServiceContext } from '@sluice/testkit';
import {
  AddressPolicy,
  createDeliverer,
  UndiciWebhookClient,
  WebhookThread,
  webhookThreadSettings,
} from '@sluice/deliverer';
import type { AttemptResult, WebhookClient, WebhookRequest } from '@sluice/deliverer';
import { SERVICE_NODE_FLAGS } from '@sluice/service-kit';
import { encodeBody, renderBody, requestHeaders } from '@sluice/webhook';
import { signBody } from '@sluice/webhook-signature';
import { startCpuWindow, startThreadCpuWindow, type CpuSplit } from './lib/cpu-window.ts';
import { benchBroker } from './lib/bench-broker.ts';
import { Semaphore } from './lib/semaphore.ts';
import { rerunWithNodeFlags } from './lib/node-flags.ts';
import { benchKafkaSecurity } from './lib/kafka-security.ts';
import { BENCH_EVENT } from './lib/ingest-payload.ts';
import { attemptRecordValue, sideRecordLoad, type SideRecordLoad } from './lib/side-record-load.ts';

// The deliverer runs in this process: give it (and the raw phase) the flags it runs with in production.
rerunWithNodeFlags(SERVICE_NODE_FLAGS.deliverer);

const EVENTS = Number(process.env.BENCH_EVENTS ?? 40_000);
const RAW_REQUESTS = Number(process.env.BENCH_RAW_REQUESTS ?? 40_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 256);
const PARTITIONS = 6;
/** BENCH_IN_PROCESS_HTTP=1: the deliverer's requests on its main thread (`webhookThread: false`), for comparison. */
const IN_PROCESS_HTTP = process.env.BENCH_IN_PROCESS_HTTP === '1';
const PER_PARTITION = process.env.BENCH_PER_PARTITION ? Number(process.env.BENCH_PER_PARTITION) : undefined;
/** BENCH_BATCH=<maxEvents>: the deliverer phase's destination delivers in batches (docs/reference/batches.md); the receiver counts events. */
const BATCH = process.env.BENCH_BATCH ? Number(process.env.BENCH_BATCH) : undefined;
/** Writes a CPU profile of the deliverer phase only (open it in Chrome DevTools). */
const CPU_PROFILE = process.env.BENCH_CPU_PROFILE;
/** BENCH_FILTER=<rounds>: the deliverer phase without and with a 10-condition filter every event passes (docs/reference/filters.md). */
const FILTER_ROUNDS = Number(process.env.BENCH_FILTER ?? 0);
/**
 * Ten tests in `where`, besides `types` and `events`, that `BENCH_EVENT` passes, each reaching into
 * the call: every event goes through all of them but the `any`'s second (its first holds).
 */
const TEN_CONDITION_FILTER = {
  types: ['track'],
  events: ['Order *'],
  where: {
    all: [
      { field: 'properties.total', gte: 1 },
      { field: 'properties.total', lt: 1_000 },
      { field: 'properties.currency', in: ['EUR', 'USD', 'GBP'] },
      { field: 'properties.sku', prefix: 'SKU-' },
      { field: 'properties.quantity', gt: 0 },
      { field: 'context.library.name', equals: 'analytics-go' },
      { field: 'context.ip', exists: true },
      { not: { field: 'properties.test', exists: true } },
      {
        any: [
          { field: 'userId', prefix: 'user-' },
          { field: 'anonymousId', exists: true },
        ],
      },
    ],
  },
};
/** Linger of the minimal deliverer's attempt records (phase 4). */
const ATTEMPT_LINGER_MS = Number(process.env.BENCH_ATTEMPT_LINGER ?? 10);
/** `sideRecordIntervalMs` of each deliverer run (phase 2) and side-record load (phase 5), in order. */
const SIDE_RECORD_INTERVALS = (process.env.BENCH_SIDE_RECORD_INTERVALS ?? '0,10').split(',').map(Number);
/** Phase 5: attempt records a second, for how long, and their linger when idle (the deliverer's 2 ms). */
const SIDE_RECORD_RATE = Number(process.env.BENCH_SIDE_RECORD_RATE ?? 30_000);
const SIDE_RECORD_SECONDS = Number(process.env.BENCH_SIDE_RECORD_SECONDS ?? 3);
const SIDE_RECORD_LINGER_MS = Number(process.env.BENCH_SIDE_RECORD_LINGER ?? 2);

type Stats = { count: number; firstAt: number; lastAt: number };

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

type BenchReceiver = Awaited<ReturnType<typeof startBenchReceiver>>;

async function startBenchReceiver() {
  const child = fork(fileURLToPath(new URL('./lib/deliverer-receiver.ts', import.meta.url)), { execArgv: [] });
  const next = <T>() => new Promise<T>((resolve) => child.once('message', (m) => resolve(m as T)));
  const { port } = await next<{ port: number }>();
  return {
    origin: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    stats: async () => (child.send({ cmd: 'stats' }), next<Stats>()),
    reset: async () => (child.send({ cmd: 'reset' }), next<unknown>()),
    stop: () => child.kill(),
  };
}

const event = (i: number) => receivedEnvelope({ ...BENCH_EVENT, messageId: `bench-${i}`, userId: `user-${i % 1_000}` });

async function rawCeiling(
  origin: string,
  receiver: BenchReceiver,
): Promise<{ perSecond: number; p99: number; cpuMicros: number; machine: CpuSplit }> {
  const pool = new Pool(origin, { connections: CONNECTIONS, pipelining: 1 });
  const rendered = renderBody(event(0));
  if (!rendered.ok) throw new Error('render failed');
  const body = encodeBody(rendered.body);
  const signature = { 'x-signature': signBody('bench-secret', body) };
  const headers = requestHeaders({ url: `${origin}/hook`, headers: {} }, 'bench-0', signature);
  const latencies: number[] = [];
  let issued = 0;
  const worker = async () => {
    while (issued < RAW_REQUESTS) {
      issued += 1;
      const t0 = performance.now();
      const res = await pool.request({ path: '/hook', method: 'POST', headers, body });
      await res.body.dump();
      latencies.push(performance.now() - t0);
    }
  };
  await receiver.reset();
  const cpu = process.cpuUsage();
  const machine = startCpuWindow(receiver.pid);
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const used = process.cpuUsage(cpu);
  const split = machine();
  await pool.close();
  // Measured like the deliverer: first to last request seen by the receiver.
  const stats = await receiver.stats();
  return {
    perSecond: stats.count / ((stats.lastAt - stats.firstAt) / 1_000),
    p99: percentile(latencies, 99),
    cpuMicros: (used.user + used.system) / RAW_REQUESTS,
    machine: split,
  };
}

/** Phase 3 (see the header): kafkajs consume + undici POST of each record, and nothing else. */
async function floorRate(
  kafka: Kafka,
  topic: string,
  headers: Record<string, string>,
  origin: string,
  receiver: BenchReceiver,
): Promise<PhaseResult> {
  const poster = cappedPoster(origin, headers);
  const consumer = kafka.consumer({ groupId: `bench-floor-${process.pid}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await receiver.reset();
  let cpu: NodeJS.CpuUsage | undefined;
  let machine: (() => CpuSplit) | undefined;
  let posted = 0;
  await consumer.run({
    partitionsConsumedConcurrently: PARTITIONS,
    eachBatch: async ({ batch }) => {
      if (!cpu) [cpu, machine] = [process.cpuUsage(), startCpuWindow(receiver.pid)];
      await Promise.all(batch.messages.map((m) => poster.post(m.value!)));
      posted += batch.messages.length;
    },
  });
  await waitForPosts(() => posted, 'floor');
  const used = process.cpuUsage(cpu);
  const split = machine!();
  await consumer.disconnect();
  await poster.close();
  return phaseResult(receiver, used, posted, split, 'floor');
}

/**
 * Phase 4 (see the header): the least a deliverer that meets docs/reference/delivery.md does — the floor's consume +
 * POST with many records in flight per partition (`ConcurrentConsumer`, the deliverer's
 * `maxInFlightPerPartition`), plus the one attempt record per POST on `sluice.attempts` that the
 * spec requires, written the cheapest way Sluice knows (in-process idempotent producer, acks=-1,
 * records gathered for BENCH_ATTEMPT_LINGER ms, default 10), each record acknowledged before its
 * offset can be committed. No decode, render, signing, webhook thread, producer thread or metrics.
 */
async function minimalDelivererRate(
  kafka: Kafka,
  config: SluiceConfig,
  headers: Record<string, string>,
  origin: string,
  receiver: BenchReceiver,
): Promise<PhaseResult> {
  const poster = cappedPoster(origin, headers);
  const logger = createLogger({ name: 'deliverer-bench', level: 'error' });
  const producer = new SafeProducer(kafka);
  await producer.connect();
  const attempts = new RecordBatcher(producer, { lingerMs: ATTEMPT_LINGER_MS, logger });
  const endpoint = `${origin}/hook`;
  let cpu: NodeJS.CpuUsage | undefined;
  let machine: (() => CpuSplit) | undefined;
  let posted = 0;
  const handle = async (record: ConsumedRecord) => {
    if (!cpu) [cpu, machine] = [process.cpuUsage(), startCpuWindow(receiver.pid)];
    const at = Date.now();
    const status = await poster.post(record.value!);
    const value = attemptRecordValue(`${record.partition}-${record.offset}`, endpoint, status, at);
    await attempts.send(config.kafka.topics.attempts, { key: record.key, value });
    posted += 1;
  };
  await receiver.reset();
  const consumer = new ConcurrentConsumer({
    kafka,
    groupId: `bench-minimal-${process.pid}`,
    topics: [config.kafka.topics.events],
    handle,
    maxInFlightPerPartition: config.delivery.maxInFlightPerPartition,
    fromBeginning: true,
    logger,
  });
  await consumer.start();
  await waitForPosts(() => posted, 'minimal deliverer');
  const used = process.cpuUsage(cpu);
  const split = machine!();
  await consumer.close();
  await attempts.flushThenClose();
  await producer.disconnect();
  await poster.close();
  return phaseResult(receiver, used, posted, split, 'minimal deliverer');
}

/** Phases 3 and 4 POST alike: one undici Pool with the raw phase's settings, at most IN_FLIGHT requests at once. */
function cappedPoster(
  origin: string,
  headers: Record<string, string>,
): { post(body: Buffer): Promise<number>; close(): Promise<void> } {
  const pool = new Pool(origin, { connections: CONNECTIONS, pipelining: 1 });
  const cap = new Semaphore(IN_FLIGHT);
  return {
    async post(body) {
      if (!cap.tryAcquire()) await cap.acquire();
      try {
        const res = await pool.request({ path: '/hook', method: 'POST', headers, body });
        await res.body.dump();
        return res.statusCode;
      } finally {
        cap.release();
      }
    },
    close: () => pool.close(),
  };
}

type PhaseResult = { perSecond: number; cpuMicros: number; machine: CpuSplit };

async function waitForPosts(posted: () => number, phase: string): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (posted() < EVENTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  if (posted() < EVENTS) throw new Error(`${phase} phase handled only ${posted()} of ${EVENTS} in time`);
}

async function phaseResult(
  receiver: BenchReceiver,
  used: NodeJS.CpuUsage,
  posted: number,
  machine: CpuSplit,
  phase: string,
): Promise<PhaseResult> {
  const stats = await receiver.stats();
  if (stats.count < EVENTS) throw new Error(`${phase} phase posted only ${stats.count} of ${EVENTS}`);
  return {
    perSecond: stats.count / ((stats.lastAt - stats.firstAt) / 1_000),
    cpuMicros: (used.user + used.system) / posted,
    machine,
  };
}

/** The real client, with each attempt's latency noted for the p99. */
function recordingClient(inner: WebhookClient, latencies: number[]): WebhookClient {
  return {
    send: (request: WebhookRequest): Promise<AttemptResult> =>
      inner.send(request).then((result) => {
        latencies.push(result.latencyMs);
        return result;
      }),
    close: () => inner.close(),
  };
}

const runRate = (run: DelivererRun) => run.perSecond;

/**
 * BENCH_FILTER=<rounds>: more deliverer phases over the same events (each its own consumer group),
 * each round none, filter, filter, none, after the bench's main deliverer phase (the coldest run,
 * left out); prints each phase and the ratios of the filter's means to the unfiltered ones.
 */
async function filterCost(
  raw: Record<string, unknown>,
  plain: SluiceConfig,
  receiver: BenchReceiver,
): Promise<string[]> {
  let phases = 1;
  const withConfig = (filter: boolean) => {
    const destinations = (raw.destinations as Record<string, unknown>[]).map((d) => ({
      ...d,
      ...(filter && { filter: TEN_CONDITION_FILTER }),
    }));
    const kafka = {
      ...(raw.kafka as object),
      clientId: `${plain.kafka.clientId}-${filter ? 'filter' : 'plain'}-${(phases += 1)}`,
      topics: plain.kafka.topics,
    };
    return testConfig({ ...raw, destinations, kafka }, process.env);
  };
  const filtered: DelivererRun[] = [];
  const plainRuns: DelivererRun[] = [];
  for (let round = 0; round < FILTER_ROUNDS; round += 1) {
    const run = async (filter: boolean) => {
      await receiver.reset();
      return delivererRun(withConfig(filter), receiver, SIDE_RECORD_INTERVALS.at(-1)!);
    };
    plainRuns.push(await run(false));
    filtered.push(await run(true), await run(true));
    plainRuns.push(await run(false));
  }
  const mean = (runs: DelivererRun[], f: (r: DelivererRun) => number) =>
    runs.reduce((a, r) => a + f(r), 0) / runs.length;
  const rate = [mean(plainRuns, runRate), mean(filtered, runRate)] as const;
  const cpu = [mean(plainRuns, (r) => r.cpuMicros), mean(filtered, (r) => r.cpuMicros)] as const;
  const alone = evaluatorNanos();
  const fmt = (runs: DelivererRun[]) =>
    runs.map((r) => `${runRate(r).toFixed(0)}/s ${r.cpuMicros.toFixed(0)} µs`).join(', ');
  return [
    `no filter (runs 1, 4, 5, 8…): ${fmt(plainRuns)}`,
    `10-condition filter (runs 2, 3, 6, 7…): ${fmt(filtered)}`,
    `evaluator alone: ${alone.toFixed(0)} ns per event = ${((alone / 1_000 / cpu[0]) * 100).toFixed(2)} % of the deliverer's CPU per webhook without a filter`,
    `filter / none: rate ${((rate[1] / rate[0]) * 100).toFixed(1)} %, CPU per webhook ${((cpu[1] / cpu[0]) * 100).toFixed(1)} % (goal: rate ≥ 95 %)`,
  ];
}

/** The 10-condition filter's own cost per event, in this process: the bench events, 200,000 checks, best of 3. */
function evaluatorNanos(): number {
  const parsed = parseFilter(TEN_CONDITION_FILTER, 'filter');
  if (!parsed.ok) throw new Error(`${parsed.field}: ${parsed.problem}`);
  const events = Array.from(
    { length: 1_000 },
    (_, i) => JSON.parse(JSON.stringify(event(i))) as Record<string, unknown>,
  );
  const checks = 200_000;
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round += 1) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < checks; i += 1)
      if (!filterAccepts(parsed.filter, events[i % events.length]!))
        throw new Error('the bench filter must pass every event');
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / checks);
  }
  return best;
}

function formatSplit(split: CpuSplit, bench: string): string {
  const total = split.bench + (split.child ?? 0) + (split.others ?? 0);
  const main = split.benchMainThread === undefined ? '' : ` [main thread ${split.benchMainThread.toFixed(2)}]`;
  return `${total.toFixed(2)} of ${availableParallelism()} (${bench} ${split.bench.toFixed(2)}${main}, receiver ${split.child?.toFixed(2) ?? '?'}, broker+other ${split.others?.toFixed(2) ?? '?'})`;
}

type DelivererRun = Omit<PhaseResult, 'machine'> & {
  intervalMs: number;
  p99: number;
  machine: CpuSplit | undefined;
  recordsPerSend: number;
  producerMicrosPerRecord: number | undefined;
};

/** Phase 2 (see the header): the real deliverer on the pre-filled events, side records every `intervalMs` under load. */
async function delivererRun(config: SluiceConfig, receiver: BenchReceiver, intervalMs: number): Promise<DelivererRun> {
  const ctx = testServiceContext('deliverer-bench', config);
  const latencies: number[] = [];
  // The client the service makes itself (see createDeliverer), wrapped to note latencies.
  const client = recordingClient(
    IN_PROCESS_HTTP
      ? new UndiciWebhookClient({
          settings: () => ({ connections: CONNECTIONS }),
          policy: () => new AddressPolicy({ enabled: true, allowCidrs: ['127.0.0.0/8'] }),
        })
      : new WebhookThread(webhookThreadSettings(config)),
    latencies,
  );
  const profiler = CPU_PROFILE ? new Session() : undefined;
  if (profiler) {
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
  }
  const service = await createDeliverer(ctx, {
    port: 0,
    webhookClient: client,
    sideRecordIntervalMs: intervalMs,
  }).start();
  const deadline = Date.now() + 90_000;
  let stats = await receiver.stats();
  // CPU of this process from the first delivery seen to the last (sampled every 50 ms).
  let cpuAtFirst: NodeJS.CpuUsage | undefined;
  let machineAtFirst: (() => CpuSplit) | undefined;
  let producerAtFirst: (() => number | undefined) | undefined;
  let countAtFirst = 0;
  while (stats.count < EVENTS && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    stats = await receiver.stats();
    if (!cpuAtFirst && stats.count > 0)
      [cpuAtFirst, machineAtFirst, producerAtFirst, countAtFirst] = [
        process.cpuUsage(),
        startCpuWindow(receiver.pid),
        startThreadCpuWindow(PRODUCER_THREAD_NAME),
        stats.count,
      ];
  }
  const cpuUsed = process.cpuUsage(cpuAtFirst);
  const machine = machineAtFirst?.();
  const producerSeconds = producerAtFirst?.();
  const handled = stats.count - countAtFirst;
  const metrics = await ctx.registry.metrics();
  await service.close();
  if (profiler) {
    const { profile } = await profiler.post('Profiler.stop');
    writeFileSync(CPU_PROFILE!, JSON.stringify(profile));
    profiler.disconnect();
  }
  if (stats.count < EVENTS) {
    const attempts = metricSum(metrics, 'sluice_deliverer_attempts_total');
    throw new Error(`deliverer delivered only ${stats.count} of ${EVENTS} in time (${attempts} attempts recorded)`);
  }
  return {
    intervalMs,
    perSecond: stats.count / ((stats.lastAt - stats.firstAt) / 1_000),
    cpuMicros: (cpuUsed.user + cpuUsed.system) / handled,
    machine,
    p99: percentile(latencies, 99),
    recordsPerSend:
      metricSum(metrics, 'sluice_side_records_per_send_sum') / metricSum(metrics, 'sluice_side_records_per_send_count'),
    producerMicrosPerRecord: producerSeconds === undefined ? undefined : (producerSeconds * 1e6) / handled,
  };
}

async function main(): Promise<void> {
  const broker = await benchBroker();
  const receiver = await startBenchReceiver();
  try {
    // Phase 1: the raw undici ceiling (after a short warm-up).
    await rawCeiling(receiver.origin, receiver);
    const raw = await rawCeiling(receiver.origin, receiver);
    await receiver.reset();

    // Phase 2: the deliverer from a pre-filled topic.
    const rawConfig: Record<string, unknown> = {
      sources: [{ id: 's-bench', writeKeys: ['k'] }],
      destinations: [
        {
          id: 'd-bench',
          type: 'webhooks',
          sourceIds: ['s-bench'],
          settings: { webhooks: [{ url: `${receiver.origin}/hook` }], sharedSecret: 'bench-secret' },
          ...(BATCH !== undefined && { batch: { maxEvents: BATCH } }),
        },
      ],
      kafka: { ...benchKafkaSecurity().raw, partitions: PARTITIONS },
      delivery: {
        ssrf: { allowCidrs: ['127.0.0.0/8'] },
        connectionsPerEndpoint: CONNECTIONS,
        maxInFlightPerDestination: IN_FLIGHT,
        ...(PER_PARTITION !== undefined && { maxInFlightPerPartition: PER_PARTITION }),
      },
    };
    const config = testConfig(rawConfig, process.env);
    const logger = createLogger({ name: 'deliverer-bench', level: process.env.LOG_LEVEL ?? 'warn' });
    const kafka = createKafka({
      brokers: broker.list,
      clientId: 'deliverer-bench',
      logger,
      security: config.kafka,
    });
    await createTestTopics(kafka, config);
    const producer = kafka.producer();
    await producer.connect();
    const codec = createJsonCodec();
    for (let i = 0; i < EVENTS; i += 5_000) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(5_000, EVENTS - i) }, async (_, j) => {
          const e = event(i + j);
          return { key: recordKey(e), value: await codec.encode(e) };
        }),
      );
      await producer.send({ topic: config.kafka.topics.events, messages: batch });
    }
    await producer.disconnect();

    const runs: DelivererRun[] = [];
    for (const [run, intervalMs] of SIDE_RECORD_INTERVALS.entries()) {
      await receiver.reset();
      // A consumer group of its own per run (the group id derives from the client id), on the same events.
      const runConfig = { ...config, kafka: { ...config.kafka, clientId: `${config.kafka.clientId}-run${run}` } };
      runs.push(await delivererRun(runConfig, receiver, intervalMs));
    }
    const filterRuns = FILTER_ROUNDS > 0 ? await filterCost(rawConfig, config, receiver) : undefined;
    const floorSignature = { 'x-signature': signBody('bench-secret', Buffer.from('floor')) };
    const floorHeaders = requestHeaders({ url: `${receiver.origin}/hook`, headers: {} }, 'bench-0', floorSignature);
    const floor = await floorRate(kafka, config.kafka.topics.events, floorHeaders, receiver.origin, receiver);
    const minimal = await minimalDelivererRate(kafka, config, floorHeaders, receiver.origin, receiver);
    const loads: SideRecordLoad[] = [];
    for (const intervalMs of SIDE_RECORD_INTERVALS) {
      loads.push(
        await sideRecordLoad({
          brokers: broker.list,
          topic: config.kafka.topics.attempts,
          rate: SIDE_RECORD_RATE,
          seconds: SIDE_RECORD_SECONDS,
          lingerMs: SIDE_RECORD_LINGER_MS,
          intervalMs,
        }),
      );
    }
    const last = runs.at(-1)!;
    const delivered = last.perSecond;
    const ratio = delivered / raw.perSecond;
    const line = (label: string, value: string) => console.log(`${label.padEnd(34)} ${value}`);
    console.log(
      `\ndeliverer benchmark — ${EVENTS} events, ${CONNECTIONS} connections, ${IN_FLIGHT} in flight, ${PARTITIONS} partitions`,
    );
    line('raw undici Pool POST/s', raw.perSecond.toFixed(0));
    line(
      BATCH === undefined ? 'deliverer webhooks/s' : `deliverer events/s (batches ≤ ${BATCH})`,
      delivered.toFixed(0),
    );
    line('ratio (goal ≥ 60 %)', `${(ratio * 100).toFixed(1)} %`);
    line(
      'floor: kafkajs consume + POST/s',
      `${floor.perSecond.toFixed(0)} (${((floor.perSecond / raw.perSecond) * 100).toFixed(1)} % of raw)`,
    );
    line(
      'minimal deliverer (+ attempts)/s',
      `${minimal.perSecond.toFixed(0)} (${((minimal.perSecond / raw.perSecond) * 100).toFixed(1)} % of raw)`,
    );
    line('p99 attempt latency (deliverer)', `${last.p99.toFixed(1)} ms`);
    line('p99 request latency (raw)', `${raw.p99.toFixed(1)} ms`);
    line(
      'CPU µs per webhook (raw / floor / minimal / deliverer)',
      `${raw.cpuMicros.toFixed(0)} / ${floor.cpuMicros.toFixed(0)} / ${minimal.cpuMicros.toFixed(0)} / ${last.cpuMicros.toFixed(0)}`,
    );
    // Where the machine's cores went in each phase: when the raw phase already keeps them all busy,
    // the ratio is bounded by the extra CPU a delivery needs over a bare POST.
    line('cores busy, raw phase', formatSplit(raw.machine, 'client'));
    if (last.machine) line('cores busy, deliverer phase', formatSplit(last.machine, 'deliverer'));
    line('cores busy, floor phase', formatSplit(floor.machine, 'consumer'));
    line('cores busy, minimal deliverer', formatSplit(minimal.machine, 'consumer'));
    console.log('\nside records of the deliverer, per run (the last is the one above):');
    for (const run of runs) {
      console.log(
        `  interval ${String(run.intervalMs).padStart(2)} ms: ${run.perSecond.toFixed(0)} webhooks/s, ` +
          `${run.recordsPerSend.toFixed(1)} records per sendBatch, producer thread ${run.producerMicrosPerRecord?.toFixed(1) ?? '?'} µs CPU per record, ` +
          `${run.cpuMicros.toFixed(0)} µs CPU per webhook, p99 attempt ${run.p99.toFixed(1)} ms` +
          (run.machine ? `, ${formatSplit(run.machine, 'deliverer')}` : ''),
      );
    }
    console.log(
      `\nside records alone at ${SIDE_RECORD_RATE}/s for ${SIDE_RECORD_SECONDS} s (RecordBatcher, ${SIDE_RECORD_LINGER_MS} ms linger, one-producer ProducerThread):`,
    );
    for (const load of loads) {
      const micros = (v: number | undefined) => v?.toFixed(1) ?? '?';
      console.log(
        `  interval ${String(load.intervalMs).padStart(2)} ms: ${load.perSecond.toFixed(0)} records/s written, ` +
          `${load.recordsPerSend.toFixed(1)} records per sendBatch (${load.sendsPerSecond.toFixed(0)}/s), ` +
          `CPU per record: producer thread ${micros(load.producerMicrosPerRecord)} µs, main thread ${micros(load.mainMicrosPerRecord)} µs; ` +
          `ack p50 ${load.ackP50.toFixed(1)} ms, p99 ${load.ackP99.toFixed(1)} ms`,
      );
    }
    for (const l of filterRuns ?? []) console.log(l);
  } finally {
    receiver.stop();
    await broker.stop();
  }
}

await main();
