/**
 * Fault isolation of the deliverer: does a bad destination fed by the same source slow a healthy
 * one? (docs/deliverer.md, "Fault isolation").
 *
 *   KAFKA_BROKERS=127.0.0.1:29092 LOG_LEVEL=error node bench/isolation.bench.ts
 *
 * Without KAFKA_BROKERS a local broker is started with `startLocalKafka()`. One run, five phases,
 * each on fresh topics with a fresh deliverer (defaults: 5 s deadline, 6 partitions, 128 events in
 * flight per partition, breaker after 5 failures, 250 ms stall time), all events from one source:
 *   1. alone: the healthy destination (an endpoint answering 200 at once) only;
 *   1b. + slow: a second destination that is healthy but slow (answers 200 after BENCH_SLOW_MS,
 *      default 400 ms, longer than the stall time) and gets one event in 40 (50/s at the default
 *      rate: ~20 requests in flight, within its 32 connections): not a bad neighbour, so it must
 *      get every one of its events with no deferral (no false stall) and the healthy one keeps pace;
 *   2. + black hole: a second destination whose endpoint accepts connections and never answers;
 *   3. + always-500: a second destination whose endpoint answers 500 at once;
 *   4. + refusing: a second destination whose endpoint refuses connections (nothing listens);
 *   5. + all three: the three bad destinations at once;
 *   6. + paused: a second destination paused before the start (docs/reference/destination-states.md):
 *      every event of it is parked, work the deliverer does beside the healthy one's.
 * Load is open-loop: BENCH_RATE events/s (default 2,000) produced for BENCH_SECONDS (default 10),
 * each event's produce time noted. Printed per phase, for the healthy destination: webhooks/s
 * (events delivered ÷ time from the first produce to the last delivery) and p99 of produce →
 * delivery; events not delivered 15 s after the last produce count with that latency. Ratios are
 * against phase 1 of the same run. Why a paced load and not a drain of a pre-filled topic: a drain
 * is bound by CPU, and every bad neighbour adds work the spec requires (its attempt and retry
 * records), so a drain would measure that cost; the question here is whether the healthy
 * destination is held back — the figure was 61 events/s with a black hole, from ~10,000.
 * The endpoints run in a child process (bench/lib/isolation-endpoints.ts). No retry service runs:
 * what the deliverer hands to `sluice.retry` stays there.
 * Knobs: BENCH_RATE, BENCH_SECONDS, BENCH_SLOW_MS, BENCH_STALL_AFTER (`delivery.stallAfter`, default the
 * config's), BENCH_PHASES (comma-separated subset of alone,slow,blackhole,500,refused,all,paused).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createJsonCodec } from '@sluice/codec';
import { recordKey } from '@sluice/envelope';
import { createKafka, SafeProducer } from '@sluice/kafka';
import { freePort, testConfig, testServiceContext } from '@sluice/testkit';
import { metricSum, scrapeMetrics, receivedEnvelope, createTestTopics } from '@sluice/testkit';
import { createDeliverer } from '@sluice/deliverer';
import { writeDestinationState } from '@sluice/destination-state';
import { SERVICE_NODE_FLAGS } from '@sluice/service-kit';
import { benchBroker } from './lib/bench-broker.ts';
import { rerunWithNodeFlags } from './lib/node-flags.ts';
import { BENCH_EVENT } from './lib/ingest-payload.ts';

rerunWithNodeFlags(SERVICE_NODE_FLAGS.deliverer);

const RATE = Number(process.env.BENCH_RATE ?? 2_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const PARTITIONS = 6;
const GRACE_MS = 15_000;
const TICK_MS = 20;
const ALL_PHASES = ['alone', 'slow', 'blackhole', '500', 'refused', 'all', 'paused'] as const;
type Phase = (typeof ALL_PHASES)[number];
const PHASES = (process.env.BENCH_PHASES?.split(',') ?? [...ALL_PHASES]) as Phase[];

interface Ports {
  healthy: number;
  failing: number;
  slow: number;
  blackHole: number;
}

async function startEndpoints() {
  const child = fork(fileURLToPath(new URL('./lib/isolation-endpoints.ts', import.meta.url)), { execArgv: [] });
  const next = <T>() => new Promise<T>((resolve) => child.once('message', (m) => resolve(m as T)));
  const ports = await next<Ports>();
  return {
    ports,
    receipts: async () => (child.send({ cmd: 'receipts' }), next<{ ids: string[]; at: number[] }>()),
    count: async () => (child.send({ cmd: 'count' }), (await next<{ count: number }>()).count),
    slowAnswered: async () => (child.send({ cmd: 'count' }), (await next<{ slow: number }>()).slow),
    reset: async () => (child.send({ cmd: 'reset' }), next<unknown>()),
    stop: () => child.kill(),
  };
}
type Endpoints = Awaited<ReturnType<typeof startEndpoints>>;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** One event in SLOW_SHARE goes to the slow neighbour too (`integrations`): as much as it can take. */
const SLOW_SHARE = 40;
const forSlow = (i: number) => i % SLOW_SHARE === 0;
const event = (phase: string, i: number) =>
  receivedEnvelope({
    ...(forSlow(i) ? {} : { integrations: { 'd-slow': false } }),
    ...BENCH_EVENT,
    messageId: `${phase}-${i}`,
    userId: `user-${i % 1_000}`,
  });

function neighbours(phase: Phase, ports: Ports, refusedPort: number): { id: string; url: string }[] {
  const hole = { id: 'd-blackhole', url: `http://127.0.0.1:${ports.blackHole}/hook` };
  const failing = { id: 'd-500', url: `http://127.0.0.1:${ports.failing}/hook` };
  const refused = { id: 'd-refused', url: `http://127.0.0.1:${refusedPort}/hook` };
  if (phase === 'slow') return [{ id: 'd-slow', url: `http://127.0.0.1:${ports.slow}/hook` }];
  if (phase === 'blackhole') return [hole];
  if (phase === '500') return [failing];
  if (phase === 'refused') return [refused];
  if (phase === 'all') return [hole, failing, refused];
  // Never called while paused (were it called, its 500s would show as retries in the metrics).
  if (phase === 'paused') return [{ id: 'd-paused', url: `http://127.0.0.1:${ports.failing}/hook` }];
  return [];
}

interface PhaseResult {
  phase: Phase;
  produced: number;
  delivered: number;
  perSecond: number;
  p99: number;
  deferred: string;
  /** When the events at or over the p99 were produced: at the start (a stall) or spread (noise). */
  slowestFrom: string;
  /** What became of a neighbour that must be served too (the slow phase) or held (the paused one). */
  neighbour?: string;
}

async function runPhase(
  phase: Phase,
  brokerList: string[],
  endpoints: Endpoints,
  refusedPort: number,
): Promise<PhaseResult> {
  await endpoints.reset();
  const bad = neighbours(phase, endpoints.ports, refusedPort);
  const config = testConfig({
    sources: [{ id: 's-bench', writeKeys: ['k'] }],
    destinations: [
      {
        id: 'd-healthy',
        type: 'webhooks',
        sourceIds: ['s-bench'],
        settings: {
          webhooks: [{ url: `http://127.0.0.1:${endpoints.ports.healthy}/hook` }],
          sharedSecret: 'bench-secret',
        },
      },
      ...bad.map((d) => ({
        id: d.id,
        type: 'webhooks',
        sourceIds: ['s-bench'],
        settings: { webhooks: [{ url: d.url }] },
      })),
    ],
    kafka: { partitions: PARTITIONS },
    delivery: {
      ssrf: { allowCidrs: ['127.0.0.0/8'] },
      ...(process.env.BENCH_STALL_AFTER ? { stallAfter: process.env.BENCH_STALL_AFTER } : {}),
    },
  });
  const ctx = testServiceContext('isolation-bench', config);
  const kafka = createKafka({ brokers: brokerList, clientId: 'isolation-bench', logger: ctx.logger });
  await createTestTopics(kafka, config);
  const producer = kafka.producer();
  await producer.connect();
  const codec = createJsonCodec();
  if (phase === 'paused') {
    // Written before the deliverer starts: it reads the states whole before its first event.
    const states = new SafeProducer(kafka);
    await states.connect();
    await writeDestinationState(states, config.kafka.topics.destinationState, 'd-paused', {
      state: 'paused',
      reason: 'isolation bench',
      by: 'bench',
      at: new Date().toISOString(),
    });
    await states.disconnect();
  }
  const service = await createDeliverer(ctx, { port: 0 }).start();

  // Warm-up: one event per partition's worth of keys, delivered before the clock starts.
  const warm = Array.from({ length: 60 }, (_, i) => event(`${phase}-warm`, i));
  const warmMessages = await Promise.all(warm.map(async (e) => ({ key: recordKey(e), value: await codec.encode(e) })));
  await producer.send({ topic: config.kafka.topics.events, messages: warmMessages });
  const warmDeadline = Date.now() + 60_000;
  const warmSlow = phase === 'slow' ? warm.filter((_, i) => forSlow(i)).length : 0;
  while (
    ((await endpoints.count()) < warm.length || (await endpoints.slowAnswered()) < warmSlow) &&
    Date.now() < warmDeadline
  )
    await new Promise((r) => setTimeout(r, 100));

  // Paced load: RATE events/s for SECONDS, in ticks of TICK_MS.
  const producedAt = new Map<string, number>();
  const total = Math.round(RATE * SECONDS);
  const start = Date.now();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.round(((Date.now() - start) / 1_000) * RATE));
    if (due > sent) {
      const batch = Array.from({ length: due - sent }, (_, j) => event(phase, sent + j));
      const messages = await Promise.all(batch.map(async (e) => ({ key: recordKey(e), value: await codec.encode(e) })));
      const now = Date.now();
      for (const e of batch) producedAt.set(e.messageId, now);
      await producer.send({ topic: config.kafka.topics.events, messages });
      sent = due;
    }
    await new Promise((r) => setTimeout(r, TICK_MS));
  }
  const lastProduced = Date.now();
  const target = warm.length + total;
  while ((await endpoints.count()) < target && Date.now() < lastProduced + GRACE_MS)
    await new Promise((r) => setTimeout(r, 100));
  // The slow neighbour must get every event too (it answers BENCH_SLOW_MS later).
  const slowTarget = warmSlow + Array.from({ length: total }, (_, i) => i).filter(forSlow).length;
  if (phase === 'slow')
    while ((await endpoints.slowAnswered()) < slowTarget && Date.now() < lastProduced + GRACE_MS)
      await new Promise((r) => setTimeout(r, 100));
  const slowAnswered = phase === 'slow' ? await endpoints.slowAnswered() : undefined;

  const receipts = await endpoints.receipts();
  const metrics = await scrapeMetrics(service.port);
  await service.close();
  await producer.disconnect();

  const latencies: number[] = [];
  /** Per event, when it was produced (ms into the phase): where the slowest ones came from. */
  const producedInPhase: number[] = [];
  let lastAt = start;
  const seen = new Set<string>();
  receipts.ids.forEach((id, i) => {
    const at = producedAt.get(id);
    if (at === undefined || seen.has(id)) return;
    seen.add(id);
    latencies.push(receipts.at[i]! - at);
    producedInPhase.push(at - start);
    lastAt = Math.max(lastAt, receipts.at[i]!);
  });
  const graceEnd = lastProduced + GRACE_MS;
  for (const [id, at] of producedAt)
    if (!seen.has(id)) {
      latencies.push(graceEnd - at);
      producedInPhase.push(at - start);
    }
  const p99 = percentile(latencies, 99);
  const slowest = producedInPhase.filter((_, i) => latencies[i]! >= p99);
  const deferred = [
    ...metrics.matchAll(/sluice_deliverer_deferred_total\{destination="([^"]+)",reason="([^"]+)"[^}]*\} (\d+)/g),
  ]
    .map((m) => `${m[1]} ${m[2]} ${m[3]}`)
    .join(', ');
  return {
    phase,
    produced: total,
    delivered: seen.size,
    perSecond: seen.size / ((lastAt - start) / 1_000),
    p99,
    slowestFrom: `slowest 1 % produced ${(Math.min(...slowest) / 1_000).toFixed(1)}–${(Math.max(...slowest) / 1_000).toFixed(1)} s into the phase`,
    deferred: deferred || 'none',
    ...(slowAnswered === undefined
      ? {}
      : { neighbour: `slow neighbour answered ${slowAnswered - warmSlow}/${slowTarget - warmSlow}` }),
    ...(phase === 'paused' && {
      neighbour: `paused neighbour: ${metricSum(metrics, 'sluice_deliverer_parked_total')}/${warm.length + total} parked`,
    }),
  };
}

async function main(): Promise<void> {
  const broker = await benchBroker();
  const endpoints = await startEndpoints();
  const refusedPort = await freePort();
  const results: PhaseResult[] = [];
  try {
    console.log(
      `isolation bench: ${RATE} events/s for ${SECONDS} s per phase, ${PARTITIONS} partitions, phases ${PHASES.join(', ')}`,
    );
    for (const phase of PHASES) {
      const r = await runPhase(phase, broker.list, endpoints, refusedPort);
      results.push(r);
      const rate = `${r.perSecond.toFixed(0)} webhooks/s, p99 ${r.p99.toFixed(0)} ms (${r.slowestFrom})`;
      const neighbour = r.neighbour ? `; ${r.neighbour}` : '';
      console.log(`  ${phase}: ${r.delivered}/${r.produced} delivered, ${rate}; deferred: ${r.deferred}${neighbour}`);
    }
  } finally {
    endpoints.stop();
    await broker.stop();
  }
  const alone = results.find((r) => r.phase === 'alone');
  console.log('\n| phase | healthy delivered | webhooks/s | of alone | p99 produce → delivery | × alone |');
  console.log('|---|---|---|---|---|---|');
  for (const r of results) {
    const share = alone ? `${((r.perSecond / alone.perSecond) * 100).toFixed(1)} %` : '—';
    const times = alone ? `${(r.p99 / alone.p99).toFixed(2)}` : '—';
    console.log(
      `| ${r.phase} | ${r.delivered}/${r.produced} | ${r.perSecond.toFixed(0)} | ${share} | ${r.p99.toFixed(0)} ms | ${times} |`,
    );
  }
  if (alone && results.length > 1) {
    const bad = results.filter((r) => r.phase !== 'alone');
    const met = bad.every((r) => r.perSecond >= 0.9 * alone.perSecond && r.p99 <= 2 * alone.p99);
    console.log(`\ngoal (≥ 90 % of alone, p99 ≤ 2× alone, beside every neighbour): ${met ? 'met' : 'NOT met'}`);
  }
  process.exit(0);
}

await main();
