/**
 * Audience-sync benchmark (docs/reference/audiences.md: members/s diffed and peak RSS for a
 * 1,000,000-member audience).
 *
 *   KAFKA_BROKERS=127.0.0.1:29092 node bench/audience.bench.ts
 *
 * Without KAFKA_BROKERS a broker is started with `startLocalKafka()`. audience-sync runs as its own
 * process (`services/audience-sync/src/main.ts`, as in production) so its RSS is its own; it is
 * sampled from `/proc/<pid>/status` (VmHWM reset per phase, VmRSS every 100 ms).
 *   1. first sync: 1,000,000 members (12-character ids) in chunks of 50,000 over HTTP → 1,000,000
 *      identifies;
 *   2. second sync: ~1 % churn (5,000 left, 5,000 joined) → 10,000 identifies;
 *   3. restart: membership rebuilt from the state topic (time to /readyz, RSS);
 *   4. raw ceiling: the same 1,000,000 identify records produced straight with kafkajs `sendBatch`.
 * Knobs: BENCH_MEMBERS (default 1,000,000), BENCH_CHUNK (50,000), BENCH_PARTITIONS (6).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKafka, ensureTopics } from '@sluice/kafka';
import { startLocalKafka, type LocalKafka } from '@sluice/local-kafka';
import { createLogger } from '@sluice/logging';
import { metric } from '@sluice/testkit';
import { ServiceProcess, writeConfigFile } from '../test/support/service-process.ts';
import { benchKafkaSecurity } from './lib/kafka-security.ts';
import { rawIdentifyCeiling } from './lib/audience-raw.ts';
import { mb, readRss, RssSampler } from './lib/audience-rss.ts';

const MEMBERS = Number(process.env.BENCH_MEMBERS ?? 1_000_000);
const CHUNK = Number(process.env.BENCH_CHUNK ?? 50_000);
const PARTITIONS = Number(process.env.BENCH_PARTITIONS ?? 6);
const EMIT_BATCH = 5_000; // the service's default emitBatchSize
const ADMIN = 'bench-admin-token-of-32-characters-or-more';
const AUDIENCE = 'Bench Audience';

const userId = (i: number) => `user-${String(i).padStart(7, '0')}`; // 12 characters
const run = `bench-aud-${randomBytes(3).toString('hex')}`;
const topic = (name: string) => `${run}.${name}`;
const topics = {
  events: topic('events'),
  rejected: topic('rejected'),
  retry: topic('retry'),
  redeliver: topic('redeliver'),
  deadLetter: topic('dead-letter'),
  attempts: topic('attempts'),
  audiences: topic('audiences'),
  audienceState: topic('audience-state'),
  delayPrefix: topic('delay.'),
};

interface PhaseResult {
  members: number;
  identifies: number;
  postMs: number;
  totalMs: number;
  emitMs: number;
  peakRss: number;
  kernelPeak: boolean;
}

async function postChunk(url: string, syncId: string, members: string[], final: boolean): Promise<void> {
  const res = await fetch(`${url}/v1/audiences/snapshots`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
    body: JSON.stringify({ sourceId: 'bench', audience: AUDIENCE, syncId, members, final }),
  });
  const body = await res.text();
  if (res.status !== 202) throw new Error(`chunk of ${syncId} answered ${res.status}: ${body}`);
}

/** Posts one sync (chunk by chunk, each acknowledged) and waits until the service completed it. */
async function sync(
  service: ServiceProcess,
  syncId: string,
  ids: (i: number) => string,
  count: number,
  completedBefore: number,
): Promise<PhaseResult> {
  const identifiesBefore = await metric(service.url, 'sluice_audience_identifies_emitted_total');
  const sampler = new RssSampler(service.child!.pid!).start();
  const started = performance.now();
  for (let from = 0; from < count; from += CHUNK) {
    const members: string[] = [];
    for (let i = from; i < Math.min(count, from + CHUNK); i++) members.push(ids(i));
    await postChunk(service.url, syncId, members, from + CHUNK >= count);
  }
  const posted = performance.now();
  while ((await metric(service.url, 'sluice_audience_syncs_completed_total')) <= completedBefore)
    await new Promise((r) => setTimeout(r, 50));
  const done = performance.now();
  const rss = sampler.stop();
  return {
    members: count,
    identifies: (await metric(service.url, 'sluice_audience_identifies_emitted_total')) - identifiesBefore,
    postMs: posted - started,
    totalMs: done - started,
    emitMs: done - posted,
    peakRss: rss.peak,
    kernelPeak: rss.kernelPeak,
  };
}

/**
 * Starts the service, retrying twice: on a busy shared broker topic creation sometimes fails with a
 * transient metadata error ("does not host this topic-partition"); the service then exits 1.
 */
async function startService(service: ServiceProcess): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await service.start();
      return;
    } catch (err) {
      if (attempt >= 3) throw err;
      console.log(
        `audience-sync did not start (attempt ${attempt}): ${(err as Error).message.split('\n')[0]!.slice(0, 160)}; retrying`,
      );
    }
  }
}

const rate = (n: number, ms: number) => Math.round((n * 1000) / ms).toLocaleString('en-US');
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function main(): Promise<void> {
  let local: LocalKafka | undefined;
  const brokers = process.env.KAFKA_BROKERS ?? (local = await startLocalKafka()).brokers;
  const dir = mkdtempSync(join(tmpdir(), 'sluice-audience-bench-'));
  const { raw: kafkaSecurity, security } = benchKafkaSecurity();
  const configPath = writeConfigFile(join(dir, 'sluice.yaml'), {
    sources: [{ id: 'bench', writeKeys: ['bench-wk'] }],
    ingest: { adminToken: ADMIN },
    kafka: { ...kafkaSecurity, clientId: run, partitions: PARTITIONS, replicationFactor: 1, topics },
  });
  const kafka = createKafka({
    brokers: brokers.split(','),
    clientId: `${run}-bench`,
    logger: createLogger({ name: 'audience-bench', level: 'error' }),
    security,
  });
  const admin = kafka.admin();
  await admin.connect();
  const service = new ServiceProcess('audience-sync', {
    SLUICE_CONFIG: configPath,
    KAFKA_BROKERS: brokers,
    LOG_LEVEL: 'warn',
  });
  try {
    await startService(service);
    const idle = readRss(service.child!.pid!).rss;
    console.log(
      `audience-sync pid ${service.child!.pid}, idle RSS ${mb(idle)}; ${MEMBERS.toLocaleString('en-US')} members in chunks of ${CHUNK.toLocaleString('en-US')}, ${PARTITIONS} partitions`,
    );

    const first = await sync(service, 'sync-1', userId, MEMBERS, 0);
    const indexBytes = await metric(service.url, 'sluice_audience_state_index_bytes');
    const heapAfterFirst = await metric(service.url, 'nodejs_heap_size_used_bytes');
    console.log(
      `first sync: ${first.identifies} identifies in ${secs(first.totalMs)} (posting ${secs(first.postMs)}, final processing ${secs(first.emitMs)}), peak RSS ${mb(first.peakRss)}`,
    );

    // ~1 % churn: every 200th member left, as many new ones joined.
    const churn = Math.round(MEMBERS / 200);
    const churned = (i: number) => (i % 200 === 0 ? userId(MEMBERS + i / 200) : userId(i));
    const second = await sync(service, 'sync-2', churned, MEMBERS, 1);
    console.log(
      `second sync: ${second.identifies} identifies in ${secs(second.totalMs)} (posting ${secs(second.postMs)}, final processing ${secs(second.emitMs)}), peak RSS ${mb(second.peakRss)}`,
    );

    const heapAfterSecond = await metric(service.url, 'nodejs_heap_size_used_bytes');
    const events = (await admin.fetchTopicOffsets(topics.events)).reduce((n, p) => n + Number(p.high), 0);
    if (first.identifies !== MEMBERS || second.identifies !== 2 * churn || events !== MEMBERS + 2 * churn) {
      throw new Error(
        `wrong counts: first ${first.identifies}, second ${second.identifies}, on the events topic ${events}`,
      );
    }

    await service.sigterm();
    const restartAt = performance.now();
    await startService(service);
    const rebuildMs = performance.now() - restartAt;
    const rebuilt = readRss(service.child!.pid!);
    const heapAfterRebuild = await metric(service.url, 'nodejs_heap_size_used_bytes');
    console.log(
      `restart: ready after ${secs(rebuildMs)} (state rebuilt), RSS ${mb(rebuilt.rss)}, peak ${mb(rebuilt.peak)}`,
    );
    await service.sigterm();

    const rawTopic = topic('raw');
    await ensureTopics(admin, [{ topic: rawTopic, numPartitions: PARTITIONS, replicationFactor: 1 }]);
    const raw = await rawIdentifyCeiling(kafka, rawTopic, MEMBERS, EMIT_BATCH, userId);
    console.log(`raw ceiling: ${raw.records} identify records with sendBatch in ${secs(raw.ms)}`);

    const firstEmitRate = (first.identifies * 1000) / first.emitMs;
    console.log('\n=== audience-sync benchmark ===');
    console.log(
      `| phase | members | identifies | wall | members/s diffed | identifies/s (final processing) | peak RSS |`,
    );
    console.log(`|---|---|---|---|---|---|---|`);
    for (const [name, r] of [
      ['first sync', first],
      ['second sync (~1 % churn)', second],
    ] as const) {
      console.log(
        `| ${name} | ${r.members.toLocaleString('en-US')} | ${r.identifies.toLocaleString('en-US')} | ${secs(r.totalMs)} | ${rate(r.members, r.totalMs)} | ${rate(r.identifies, r.emitMs)} | ${mb(r.peakRss)} |`,
      );
    }
    console.log(
      `raw ceiling (kafkajs sendBatch, ${EMIT_BATCH} per batch, acks=-1): ${rate(raw.records, raw.ms)} records/s`,
    );
    console.log(
      `ratio first-sync identifies/s ÷ raw: ${((100 * firstEmitRate) / raw.perSecond).toFixed(1)} % (the service also writes ${MEMBERS.toLocaleString('en-US')} state records in that phase)`,
    );
    console.log(
      `ratio first-sync members/s end to end ÷ raw: ${((100 * MEMBERS * 1000) / first.totalMs / raw.perSecond).toFixed(1)} %`,
    );
    console.log(
      `idle RSS ${mb(idle)}; index ${mb(indexBytes)} (gauge); peak RSS minus idle: first ${mb(first.peakRss - idle)}, second ${mb(second.peakRss - idle)}; after restart ${mb(rebuilt.rss)} (rebuild ${secs(rebuildMs)})`,
    );
    console.log(
      `V8 heap used (live objects plus garbage not yet collected): after first sync ${mb(heapAfterFirst)}, after second ${mb(heapAfterSecond)}, after rebuild ${mb(heapAfterRebuild)}`,
    );
    console.log(`peak source: ${first.kernelPeak ? 'VmHWM reset per phase' : 'VmRSS sampled every 100 ms'}`);
  } catch (err) {
    console.error(
      `audience-sync exits ${JSON.stringify(service.exits)}; its last output:\n${service.output.slice(-4_000)}`,
    );
    throw err;
  } finally {
    await service.kill9().catch(() => undefined);
    // Only this run's topics (its unique prefix): ~700 MB of records otherwise stay on the broker.
    const mine = (await admin.listTopics().catch(() => [] as string[])).filter((t) => t.startsWith(`${run}.`));
    await admin.deleteTopics({ topics: mine }).catch(() => undefined);
    await admin.disconnect();
    rmSync(dir, { recursive: true, force: true });
    await local?.dispose();
  }
}

await main();
