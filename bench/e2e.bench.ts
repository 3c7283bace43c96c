/**
 * The headline benchmark: end-to-end delivered events/s with Kafka, all four services
 * (each its own process) and the receiver on this one machine; then p50/p99 latency from ingest's
 * acknowledgement to receipt at half that rate. Two phases, each on fresh services and topics:
 * one webhook per event, then batched delivery (`destinations[].batch`, up to BENCH_BATCH_EVENTS
 * events per request). In the same run, the raw ceiling: undici POSTs of the same webhook body
 * straight to the same receiver with the same connection count.
 *
 *   node bench/e2e.bench.ts            # provisions a local broker unless KAFKA_BROKERS is set
 *   BENCH_EVENTS=100000 BENCH_LATENCY_SECONDS=15 BENCH_PHASES=single,batched BENCH_BATCH_EVENTS=100 BENCH_BATCH_WAIT=50ms
 *   BENCH_PER_PARTITION=<delivery.maxInFlightPerPartition> ...
 *   BENCH_PROFILE_DIR=/tmp/prof   # each service writes V8 CPU profiles (one per thread) to <dir>/<mode>-<service>
 *
 * Tracing: a phase named `<mode>@<ratio>` (`single@0.01`, `batched@1`) runs every service with
 * tracing on, sampling `parentbased_traceidratio` at that ratio, exporting over OTLP/HTTP to a span
 * sink in this process (a real HTTP server that decodes and counts the spans; its CPU counts as the
 * load generator's); it prints its rate and CPU against the phase of the same mode without `@`:
 *   BENCH_PHASES=single,single@0.01,single@1,batched,batched@0.01,batched@1 node bench/e2e.bench.ts
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, Pool, request } from 'undici';
import { startLocalKafka, type LocalKafka } from '@sluice/local-kafka';
import { startProcessCpuWindow } from './lib/cpu-window.ts';
import { ingestMeanBatchSize } from './lib/ingest-batch-size.ts';
import { e2eCall } from './lib/e2e-call.ts';
import { ServiceProcess, writeConfigFile, type ServiceName } from '../test/support/service-process.ts';
import { benchKafkaSecurity } from './lib/kafka-security.ts';
import { type OtlpReceiver, prefixedTopics, startOtlpReceiver } from '@sluice/testkit';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const LATENCY_SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 15);
const BATCH = 100;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const PARTITIONS = Number(process.env.BENCH_PARTITIONS ?? 6);
const PHASES = (process.env.BENCH_PHASES ?? 'single,batched').split(',').map(parsePhase);
const BATCH_EVENTS = Number(process.env.BENCH_BATCH_EVENTS ?? 100);
const BATCH_WAIT = process.env.BENCH_BATCH_WAIT ?? '50ms';
const PER_PARTITION = process.env.BENCH_PER_PARTITION ? Number(process.env.BENCH_PER_PARTITION) : undefined;
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR;
const WRITE_KEY = 'bench-key';
const SECRET = 'bench-secret';

type Mode = 'single' | 'batched';
/** A phase: its delivery mode, and the sampling ratio when tracing is on. */
interface PhaseSpec {
  mode: Mode;
  ratio?: number;
  label: string;
}
function parsePhase(label: string): PhaseSpec {
  const [mode, ratio] = label.trim().split('@') as [Mode, string | undefined];
  if (mode !== 'single' && mode !== 'batched') throw new Error(`BENCH_PHASES: unknown mode in ${label}`);
  if (ratio === undefined) return { mode, label };
  const r = Number(ratio);
  if (!(r >= 0 && r <= 1)) throw new Error(`BENCH_PHASES: ${label}: the ratio after @ is from 0 to 1`);
  return { mode, ratio: r, label };
}
interface PhaseResult {
  mode: Mode;
  spec: PhaseSpec;
  /** Spans the sink received during the phase. */
  spans: number;
  /** Total CPU µs per delivered event, all processes. */
  cpuPerEvent: number;
  ingestRate: number;
  throughput: number;
  delivered: number;
  requests: number;
  cpuLine: string;
  latencyLine: string;
  p99: number;
}

const here = fileURLToPath(new URL('.', import.meta.url));

function ask<T>(child: ChildProcess, cmd: string, key: string): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (msg: Record<string, unknown>) => {
      if (key in msg) {
        child.off('message', onMessage);
        resolve(msg as T);
      }
    };
    child.on('message', onMessage);
    child.send({ cmd });
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

let seq = 0;
const runId = `e2e-${process.pid}`;
function batchBody(): { ids: string[]; body: string } {
  const ids: string[] = [];
  const batch = [];
  for (let i = 0; i < BATCH; i++) {
    const messageId = `${runId}-${seq++}`;
    ids.push(messageId);
    batch.push(e2eCall(messageId, seq));
  }
  return { ids, body: JSON.stringify({ batch, sentAt: new Date().toISOString() }) };
}

async function main() {
  let broker: LocalKafka | undefined;
  const brokers = process.env.KAFKA_BROKERS ?? (broker = await startLocalKafka()).brokers;
  const dir = mkdtempSync(join(tmpdir(), 'sluice-e2e-bench-'));
  const receiver = fork(join(here, 'lib/e2e-receiver.ts'), [], { execArgv: [] });
  const { port } = await new Promise<{ port: number }>((resolve) => receiver.once('message', resolve as never));
  const results: PhaseResult[] = [];
  const sink = PHASES.some((p) => p.ratio !== undefined) ? await startOtlpReceiver({ keep: false }) : undefined;
  for (const spec of PHASES) results.push(await phase(spec, brokers, dir, receiver, port, sink));
  await sink?.close();

  // Raw ceiling:  // Raw ceiling: the same webhook body POSTed straight to the same receiver, same connections.
  await ask(receiver, 'reset', 'reset');
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CONNECTIONS });
  const rawBody = JSON.stringify({
    version: 1,
    type: 'track',
    userId: 'user-1',
    timestamp: new Date().toISOString(),
    context: { ip: '203.0.113.7', library: { name: 'bench', version: '1' } },
    messageId: 'raw',
    event: 'Order Completed',
    properties: {
      orderId: 'raw',
      total: 42.5,
      currency: 'EUR',
      items: [{ sku: 'sku-1', qty: 2 }],
      note: 'x'.repeat(300),
    },
  });
  let rawSent = 0;
  const r0 = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS * 4 }, async () => {
      while (rawSent < EVENTS) {
        const id = `raw-${rawSent++}`;
        const res = await pool.request({
          path: '/hook',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-message-id': id },
          body: rawBody,
        });
        await res.body.dump();
      }
    }),
  );
  const rawRate = EVENTS / ((performance.now() - r0) / 1000);

  console.log(
    '\n== Sluice end-to-end benchmark (Kafka + ingest + deliverer + retry + audience-sync + receiver, one machine)',
  );
  console.log(
    `events: ${EVENTS} per phase in ingest batches of ${BATCH}, ${CONNECTIONS} connections, ${PARTITIONS} partitions`,
  );
  console.log(`raw ceiling (undici→recv):  ${rawRate.toFixed(0)} POST/s (one event per request)`);
  for (const r of results) {
    const how =
      r.mode === 'single' ? 'one webhook per event' : `batches of up to ${BATCH_EVENTS} events, maxWait ${BATCH_WAIT}`;
    const tracing =
      r.spec.ratio === undefined ? 'tracing off' : `tracing on at ${r.spec.ratio * 100} %, ${r.spans} spans exported`;
    console.log(`\n-- ${r.spec.label}: ${how}; ${tracing}`);
    console.log(`ingest accepted:            ${r.ingestRate.toFixed(0)} events/s`);
    console.log(
      `delivered end to end:       ${r.throughput.toFixed(0)} events/s (${r.delivered}/${EVENTS} delivered in ${r.requests} requests)`,
    );
    console.log(`ratio delivered/raw:        ${((r.throughput / rawRate) * 100).toFixed(1)} %`);
    console.log(r.cpuLine);
    console.log(r.latencyLine);
    const off = results.find((o) => o.mode === r.mode && o.spec.ratio === undefined);
    if (r.spec.ratio !== undefined && off)
      console.log(
        `against ${off.spec.label} (tracing off): ${((r.throughput / off.throughput) * 100).toFixed(1)} % of its events/s, ${((r.cpuPerEvent / off.cpuPerEvent) * 100).toFixed(1)} % of its CPU per event`,
      );
  }
  const single = results.find((r) => r.mode === 'single');
  const batched = results.find((r) => r.mode === 'batched');
  if (single && batched)
    console.log(`\nbatched / single delivered:  ${(batched.throughput / single.throughput).toFixed(2)} ×`);

  await pool.close();
  receiver.kill();
  rmSync(dir, { recursive: true, force: true });
  await broker?.dispose();
}

/** One pipeline (fresh topics and services) in `mode`: throughput, then latency at half of it. */
async function phase(
  spec: PhaseSpec,
  brokers: string,
  dir: string,
  receiver: ChildProcess,
  port: number,
  sink: OtlpReceiver | undefined,
): Promise<PhaseResult> {
  const { mode } = spec;
  const hook = `http://127.0.0.1:${port}/hook`;
  const prefix = `bench-${mode}-${process.pid}-${Date.now()}`;
  const tracing: Record<string, string> =
    spec.ratio === undefined || sink === undefined
      ? {}
      : {
          OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
          OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
          OTEL_TRACES_SAMPLER_ARG: String(spec.ratio),
        };
  const configPath = writeConfigFile(join(dir, `sluice-${mode}.yaml`), {
    sources: [{ id: 'bench', writeKeys: [WRITE_KEY] }],
    destinations: [
      {
        id: 'bench-hooks',
        type: 'webhooks',
        sourceIds: ['bench'],
        settings: { webhooks: [{ url: hook }], sharedSecret: SECRET },
        ...(mode === 'batched' && { batch: { maxEvents: BATCH_EVENTS, maxWait: BATCH_WAIT } }),
      },
    ],
    kafka: {
      ...benchKafkaSecurity().raw,
      clientId: prefix,
      partitions: PARTITIONS,
      replicationFactor: 1,
      topics: prefixedTopics(prefix),
    },
    delivery: {
      ssrf: { allowCidrs: ['127.0.0.0/8'] },
      ...(PER_PARTITION !== undefined && { maxInFlightPerPartition: PER_PARTITION }),
    },
  });
  const services: ServiceProcess[] = [];
  for (const name of ['ingest', 'deliverer', 'retry', 'audience-sync'] as ServiceName[]) {
    // NODE_OPTIONS reaches the service's own process only (it is spawned with the service's runtime flags).
    const profile: Record<string, string> = PROFILE_DIR
      ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${join(PROFILE_DIR, `${spec.label}-${name}`)}` }
      : {};
    services.push(
      await new ServiceProcess(name, {
        SLUICE_CONFIG: configPath,
        KAFKA_BROKERS: brokers,
        LOG_LEVEL: 'error',
        ...profile,
        ...tracing,
      }).start(),
    );
  }
  const ingest = services[0]!;
  const agent = new Agent({ connections: CONNECTIONS, pipelining: 1 });
  const auth = `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`;
  const acks = new Map<string, number>();
  const post = async (b: { ids: string[]; body: string }) => {
    const res = await request(`${ingest.url}/v1/batch`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', authorization: auth },
      body: b.body,
    });
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`ingest answered ${res.statusCode}`);
    const at = performance.timeOrigin + performance.now();
    for (const id of b.ids) acks.set(id, at);
  };
  const waitDelivered = async (n: number, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { count } = await ask<{ count: number }>(receiver, 'count', 'count');
      if (count >= n || Date.now() > deadline) return count;
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  // Warm-up (JIT, connections, consumer group joins).
  await Promise.all(Array.from({ length: 20 }, () => post(batchBody())));
  await waitDelivered(2_000, 60_000);
  await ask(receiver, 'reset', 'reset');
  acks.clear();

  // Throughput. Pre-build bodies so the load generator spends little CPU.
  const bodies = Array.from({ length: Math.ceil(EVENTS / BATCH) }, batchBody);
  let next = 0;
  // CPU per process from the first request to the last delivery, for the budget.
  const cpuWindow = startProcessCpuWindow({
    ...Object.fromEntries(services.map((s) => [s.name, s.child!.pid!])),
    receiver: receiver.pid!,
    'load generator': process.pid,
  });
  const spansBefore = sink?.count ?? 0;
  const t0 = performance.timeOrigin + performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < bodies.length) await post(bodies[next++]!);
    }),
  );
  const ingestDone = performance.timeOrigin + performance.now();
  const delivered = await waitDelivered(EVENTS, 300_000);
  const phaseCpu = cpuWindow();
  const ingestBatch = await ingestMeanBatchSize(ingest.url);
  const { requests } = await ask<{ requests: number }>(receiver, 'count', 'count');
  const { arrivals } = await ask<{ arrivals: [string, number][] }>(receiver, 'dump', 'arrivals');
  const times = arrivals.map(([, at]) => at).sort((a, b) => a - b);
  const lastAt = times[times.length - 1]!;
  const throughput = delivered / ((lastAt - t0) / 1000);
  const ingestRate = EVENTS / ((ingestDone - t0) / 1000);

  // Latency at half the measured rate.
  await ask(receiver, 'reset', 'reset');
  acks.clear();
  const rate = throughput / 2;
  const batchesPerSecond = rate / BATCH;
  const total = Math.round(batchesPerSecond * LATENCY_SECONDS);
  const start = performance.now();
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / batchesPerSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inflight.push(post(batchBody()));
  }
  await Promise.all(inflight);
  await waitDelivered(total * BATCH, 60_000);
  const dump2 = await ask<{ arrivals: [string, number][] }>(receiver, 'dump', 'arrivals');
  const latencies = dump2.arrivals
    .filter(([id]) => acks.has(id))
    .map(([id, at]) => at - acks.get(id)!)
    .sort((a, b) => a - b);
  await ask(receiver, 'reset', 'reset');

  // The window ends up to 100 ms after the last delivery (the receiver is polled): a slight overcount.
  const perEvent = Object.entries(phaseCpu.cpu).map(
    ([name, seconds]) => `${name} ${((seconds * 1e6) / delivered).toFixed(0)}`,
  );
  const busy = Object.values(phaseCpu.cpu).reduce((a, b) => a + b, 0);
  const p99 = percentile(latencies, 99);
  await agent.close();
  for (const s of services) await s.sigterm();
  return {
    mode,
    spec,
    // Spans of the throughput and latency runs, the last exported at each service's shutdown.
    spans: (sink?.count ?? 0) - spansBefore,
    cpuPerEvent: (busy * 1e6) / delivered,
    ingestRate,
    throughput,
    delivered,
    requests,
    p99,
    cpuLine: `CPU µs per delivered event: ${perEvent.join(', ')} (total ${((busy * 1e6) / delivered).toFixed(0)}; ${(busy / phaseCpu.seconds).toFixed(2)} cores busy; 'other' = broker + rest of the machine); ingest ${ingestBatch === undefined ? '?' : Math.round(ingestBatch)} records per sendBatch`,
    latencyLine: `latency at ${rate.toFixed(0)} events/s (half rate), ack→receipt over ${latencies.length} events: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${latencies[latencies.length - 1]?.toFixed(1)} ms`,
  };
}

await main();
