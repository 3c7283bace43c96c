/**
 * Retry-service lateness benchmark (docs/reference/retries.md "never early; within 2 s"; goal: 0 early, p99 ≤ 250 ms).
 *
 *   node bench/retry.bench.ts   # starts a local broker unless KAFKA_BROKERS is set
 *
 * 10,000 retry records, each with an exact due time (`Retry-After`) spread uniformly 5–20 s ahead,
 * go through the real retry service (in-process) and a real broker: `sluice.retry` → delay tiers
 * (1 s, 2 s, 4 s, 8 s) → `sluice.redeliver`. Lateness = time a reader of `sluice.redeliver` sees a
 * record − its due time. The raw ceiling runs the same due times through an in-memory timer that
 * produces each record when due to one plain topic: the lateness of produce → consume alone.
 */
import { randomBytes } from 'node:crypto';
import { ConfigStore, parseConfig, readEnv, type SluiceConfig } from '@sluice/config';
import { retryStateToHeaders, RETRY_HEADERS, type RetryState } from '@sluice/envelope';
import { createKafka, ensureTopics, SafeProducer, type Kafka } from '@sluice/kafka';
import { startLocalKafka } from '@sluice/local-kafka';
import { createLogger } from '@sluice/logging';
import { createMetricsRegistry } from '@sluice/service-kit';
import { createRetry } from '@sluice/retry';
import { scrapeMetrics } from '@sluice/testkit';
import { topicSpecs } from '@sluice/topology';
import { formatSummary, summarise, watchArrivals } from './lib/retry-measure.ts';
import { benchKafkaSecurity } from './lib/kafka-security.ts';

const RECORDS = 10_000;
const MIN_AHEAD_MS = 5_000;
const MAX_AHEAD_MS = 20_000;
const PARTITIONS = 6;

const env = readEnv();
const localBroker = env.kafkaBrokers ? undefined : await startLocalKafka();
const brokers = env.kafkaBrokers ?? [localBroker!.brokers];
const logger = createLogger({ name: 'retry-bench', level: env.logLevel === 'info' ? 'error' : env.logLevel });
const run = `bench-retry-${randomBytes(3).toString('hex')}`;
const topic = (name: string) => `${run}.${name}`;
const { raw: kafkaSecurity, security } = benchKafkaSecurity();
const configFor = (scenario: string, tiers?: string[]) =>
  parseConfig({
    kafka: {
      ...kafkaSecurity,
      clientId: `${run}-${scenario}`,
      partitions: PARTITIONS,
      replicationFactor: 1,
      topics: Object.fromEntries(
        [
          'events',
          'rejected',
          'retry',
          'redeliver',
          'dead-letter',
          'attempts',
          'audiences',
          'audience-state',
          'delay.',
        ].map((t) => [
          t === 'delay.' ? 'delayPrefix' : t.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()),
          topic(`${scenario}.${t}`),
        ]),
      ),
    },
    retry: { window: '1h', ...(tiers && { tiers }) },
  });
const kafka: Kafka = createKafka({ brokers, clientId: run, logger, security });

function states(now: number): RetryState[] {
  return Array.from({ length: RECORDS }, (_, i) => ({
    messageId: `m-${i}`,
    sourceId: `src-${i % 50}`,
    destinationId: 'dest-1',
    eventType: 'track',
    endpoints: ['https://example.invalid/hook'],
    firstAttemptAt: now,
    attempts: 1,
    history: [],
    retryAfterMs: MIN_AHEAD_MS + Math.round(Math.random() * (MAX_AHEAD_MS - MIN_AHEAD_MS)),
  }));
}

async function throughRetryService(config: SluiceConfig): Promise<number[]> {
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, topicSpecs(config));
  await admin.disconnect();
  const service = await createRetry(
    {
      name: 'retry',
      env,
      brokers,
      config: new ConfigStore(undefined, config),
      logger,
      registry: createMetricsRegistry('retry'),
    },
    { port: 0 },
  ).start();
  const lateness: number[] = [];
  const stop = await watchArrivals(
    kafka,
    config.kafka.topics.redeliver,
    `${config.kafka.clientId}-measure`,
    (h, readAt) => lateness.push(readAt - Number(h[RETRY_HEADERS.dueAt])),
  );
  const producer = new SafeProducer(kafka);
  await producer.connect();
  const all = states(Date.now());
  for (let i = 0; i < all.length; i += 1_000) {
    await producer.send(
      config.kafka.topics.retry,
      all.slice(i, i + 1_000).map((s) => ({
        key: `${s.sourceId}:u${s.messageId}`,
        value: '{"type":"track"}',
        headers: retryStateToHeaders(s),
      })),
    );
  }
  const deadline = Date.now() + MAX_AHEAD_MS + 30_000;
  while (lateness.length < RECORDS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  const metrics = await scrapeMetrics(service.port);
  const early = /sluice_retry_early_total\{[^}]*\} (\d+)/.exec(metrics)?.[1];
  console.log(`  service metric sluice_retry_early_total = ${early}`);
  await Promise.all([stop(), producer.disconnect()]);
  await service.close();
  return lateness;
}

async function rawCeiling(): Promise<number[]> {
  const plain = topic('raw');
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [{ topic: plain, numPartitions: PARTITIONS, replicationFactor: 1 }]);
  await admin.disconnect();
  const lateness: number[] = [];
  const stop = await watchArrivals(kafka, plain, `${run}-raw`, (h, readAt) => lateness.push(readAt - Number(h.due)));
  const producer = new SafeProducer(kafka);
  await producer.connect();
  const now = Date.now();
  const due = states(now)
    .map((s) => now + s.retryAfterMs!)
    .sort((a, b) => a - b);
  let next = 0;
  while (next < due.length) {
    const t = Date.now();
    const batch: number[] = [];
    while (next < due.length && due[next]! <= t) batch.push(due[next++]!);
    if (batch.length > 0)
      await producer.send(
        plain,
        batch.map((d, i) => ({ key: String(i), value: 'x', headers: { due: String(d) } })),
      );
    else await new Promise((r) => setTimeout(r, Math.min(5, due[next]! - t)));
  }
  const deadline = Date.now() + 10_000;
  while (lateness.length < RECORDS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  await Promise.all([stop(), producer.disconnect()]);
  return lateness;
}

const scenarios = [
  { name: 'default tiers (10s…60m)', config: configFor('default') },
  { name: 'tiers 1s/2s/4s/8s (paused tiers)', config: configFor('short', ['1s', '2s', '4s', '8s']) },
];
console.log(
  `${RECORDS} retries due ${MIN_AHEAD_MS / 1000}-${MAX_AHEAD_MS / 1000} s ahead, produced as one burst, ${PARTITIONS} partitions, broker ${brokers.join(',')}`,
);
let ok = true;
for (const scenario of scenarios) {
  const summary = summarise(await throughRetryService(scenario.config));
  console.log(formatSummary(`retry service, ${scenario.name}`, summary));
  ok &&= summary.count === RECORDS && summary.early === 0 && summary.p99 <= 250;
}
const raw = summarise(await rawCeiling());
console.log(formatSummary('raw ceiling (timer → produce → read)', raw));
console.log(ok ? 'GOAL MET: 0 early, p99 ≤ 250 ms, none missing' : 'GOAL NOT MET');
await localBroker?.dispose();
process.exit(ok ? 0 : 1);
