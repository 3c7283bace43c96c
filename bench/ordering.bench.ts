/**
 * Ordered delivery per user against unordered (docs/operations.md, "How ordering is tested"):
 * delivered events/s end to end (ingest, deliverer, retry, each its own process; Kafka; the
 * receiver in a child process) to one destination with `ordering: per-user`, and to one without,
 * in the same run, with a receiver that answers every request, then with one that answers 503 to
 * a seeded random 10 %. Each phase on fresh topics and services; the ratio ordered ÷ unordered per
 * failure rate. Events carry 1,000 users (`userId` user-0 … user-999), so every user has
 * BENCH_EVENTS ÷ 1,000 events in a phase. Retry tiers are shrunk to 1 s and 2 s (the defaults
 * start at 30 s), so a failed event is retried about 1 s later: with failures the figure includes
 * that tail, for both destinations alike.
 *
 *   node bench/ordering.bench.ts      # provisions a local broker unless KAFKA_BROKERS is set
 *   BENCH_EVENTS=50000 BENCH_FAIL_RATES=0,0.1 BENCH_CONNECTIONS=16 node bench/ordering.bench.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { ServiceProcess, writeConfigFile } from '../test/support/service-process.ts';
import { benchBroker } from './lib/bench-broker.ts';
import { e2eCall } from './lib/e2e-call.ts';
import { startE2eReceiver } from './lib/e2e-receiver-client.ts';
import { benchKafkaSection } from './lib/kafka-security.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 50_000);
const FAIL_RATES = (process.env.BENCH_FAIL_RATES ?? '0,0.1').split(',').map(Number);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const PARTITIONS = 6;
const BATCH = 100;
const WRITE_KEY = 'bench-key';
const ORDERINGS = ['none', 'per-user'] as const;
type Ordering = (typeof ORDERINGS)[number];
type E2eReceiver = Awaited<ReturnType<typeof startE2eReceiver>>;

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

let seq = 0;
function body(): { ids: string[]; text: string } {
  const batch = Array.from({ length: BATCH }, () => e2eCall(`ordering-${process.pid}-${seq}`, seq++));
  return { ids: batch.map((c) => String(c.messageId)), text: JSON.stringify({ batch }) };
}

/** One pipeline (fresh topics and services), its destination ordered or not: delivered events/s. */
async function phase(ordering: Ordering, failRate: number, brokers: string, dir: string, receiver: E2eReceiver) {
  const prefix = `bench-ordering-${ordering}-${failRate}-${Date.now()}`;
  const configPath = writeConfigFile(join(dir, `${prefix}.yaml`), {
    sources: [{ id: 'bench', writeKeys: [WRITE_KEY] }],
    destinations: [
      {
        id: 'bench-hooks',
        type: 'webhooks',
        sourceIds: ['bench'],
        settings: { webhooks: [{ url: `http://127.0.0.1:${receiver.port}/hook` }], sharedSecret: 'bench-secret' },
        ...(ordering !== 'none' && { ordering }),
      },
    ],
    kafka: benchKafkaSection(prefix, PARTITIONS),
    delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
    retry: { window: '10m', schedule: ['1s', '2s'], tiers: ['1s', '2s'] },
  });
  const services: ServiceProcess[] = [];
  for (const name of ['ingest', 'deliverer', 'retry'] as const)
    services.push(
      await new ServiceProcess(name, { SLUICE_CONFIG: configPath, KAFKA_BROKERS: brokers, LOG_LEVEL: 'error' }).start(),
    );
  const ingest = new Pool(services[0]!.url, { connections: CONNECTIONS });
  const headers = {
    'content-type': 'application/json',
    authorization: `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`,
  };
  const post = async (b: { text: string }) => {
    const { statusCode, body: answer } = await ingest.request({
      path: '/v1/batch',
      method: 'POST',
      headers,
      body: b.text,
    });
    await answer.dump();
    if (statusCode !== 200) throw new Error(`ingest answered ${statusCode}`);
  };
  // Warm-up (JIT, connections, group joins), answered in full.
  await receiver.failShare(0);
  await Promise.all(Array.from({ length: 20 }, () => post(body())));
  await receiver.delivered(2_000, 60_000);
  await receiver.reset();
  await receiver.failShare(failRate);

  const bodies = Array.from({ length: Math.ceil(EVENTS / BATCH) }, body);
  let next = 0;
  const t0 = performance.timeOrigin + performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < bodies.length) await post(bodies[next++]!);
    }),
  );
  const count = await receiver.delivered(EVENTS, 300_000);
  const { requests } = await receiver.counts();
  const lastAt = Math.max(...(await receiver.arrivals()).map(([, at]) => at));
  await receiver.reset();
  await ingest.close();
  for (const s of services.reverse()) await s.sigterm();
  return { ordering, failRate, delivered: count, requests, perSecond: count / ((lastAt - t0) / 1000) };
}

async function main() {
  const broker = await benchBroker();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-ordering-bench-'));
  const receiver = await startE2eReceiver();
  console.log(
    `== Sluice ordering benchmark: ${EVENTS} events per phase, 1,000 users, ${CONNECTIONS} connections to ingest, ${PARTITIONS} partitions`,
  );
  console.log(`load average at the start: ${load()}`);
  const results: Awaited<ReturnType<typeof phase>>[] = [];
  for (const failRate of FAIL_RATES)
    for (const ordering of ORDERINGS) {
      const r = await phase(ordering, failRate, broker.list.join(','), dir, receiver);
      console.log(
        `${String(failRate * 100).padStart(3)} % failures, ordering ${ordering.padEnd(8)}: ${r.perSecond.toFixed(0)} delivered events/s (${r.delivered}/${EVENTS} in ${r.requests} requests; load ${load()})`,
      );
      results.push(r);
    }
  for (const failRate of FAIL_RATES) {
    const of = (o: Ordering) => results.find((r) => r.failRate === failRate && r.ordering === o)!.perSecond;
    console.log(
      `ratio ordered / unordered at ${failRate * 100} % failures: ${((of('per-user') / of('none')) * 100).toFixed(1)} %`,
    );
  }
  receiver.stop();
  rmSync(dir, { recursive: true, force: true });
  await broker.stop();
}

await main();
