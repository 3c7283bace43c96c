import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { createKafka, ensureTopics } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { fileKafka, startReceiver, testBrokers, testConfig, waitUntil } from '@sluice/testkit';
import { startDelivererProcess } from './deliverer-process.ts';
import { produceEvents } from './kafka-helpers.ts';

const TOTAL = 20_000;

const dir = mkdtempSync(join(tmpdir(), 'deliverer-kill9-'));
const children: ChildProcess[] = [];
const closers: (() => Promise<void>)[] = [];
// A failed run must not leave the receiver open: the file's process would never end.
after(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const close of closers) await close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

it('kill -9 in the middle of 20,000 events, then restart: the receiver has every event at least once', {
  timeout: 240_000,
}, async () => {
  const seen = new Set<string>();
  const receiver = await startReceiver({
    behaviour: (req) => {
      seen.add(String(req.headers['x-message-id']));
      return { status: 200 };
    },
  });
  closers.push(() => receiver.close());
  // A batched destination beside it, fed the same events: every event in some batch, at least once.
  const seenBatched = new Set<string>();
  const batchReceiver = await startReceiver({
    behaviour: (req) => {
      for (const id of (JSON.parse(req.body.toString('utf8')) as { messageIds: string[] }).messageIds)
        seenBatched.add(id);
      return { status: 200 };
    },
  });
  closers.push(() => batchReceiver.close());
  const raw = {
    sources: [{ id: 's-k9', writeKeys: ['k'] }],
    destinations: [
      {
        id: 'd-k9',
        type: 'webhooks',
        sourceIds: ['s-k9'],
        settings: { webhooks: [{ url: receiver.url }], sharedSecret: 'k9' },
      },
      {
        id: 'd-k9-batched',
        type: 'webhooks',
        sourceIds: ['s-k9'],
        batch: { maxEvents: 100, maxWait: '20ms' },
        settings: { webhooks: [{ url: batchReceiver.url }], sharedSecret: 'k9' },
      },
    ],
    delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
  };
  const config = testConfig({ ...raw, kafka: { partitions: 4 } });
  const configPath = join(dir, 'sluice.yaml');
  writeFileSync(configPath, JSON.stringify({ ...raw, kafka: fileKafka(config) }));

  const kafka = createKafka({
    brokers: testBrokers(),
    clientId: 'kill9-test',
    logger: createLogger({ name: 'kill9', level: 'error' }),
  });
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [{ topic: config.kafka.topics.events, numPartitions: 4, replicationFactor: 1 }]);
  await admin.disconnect();
  const events = Array.from({ length: TOTAL }, (_, i) => ({
    sourceId: 's-k9',
    type: 'track' as const,
    messageId: `k9-${i}`,
    userId: `user-${i % 500}`,
    event: 'Killed',
    properties: { i },
    timestamp: '2026-11-21T10:00:00.000Z',
    receivedAt: new Date().toISOString(),
  }));
  await produceEvents(kafka, config.kafka.topics.events, events);

  const first = startDelivererProcess(configPath);
  children.push(first);
  // Start-up (process, Kafka, webhook thread) takes what the machine's CPU allows; the run is timed from its first request.
  await waitUntil(() => receiver.requests.length > 0, 120_000, 'the first run to deliver');
  await waitUntil(
    () => receiver.requests.length >= 3_000,
    60_000,
    () => `the first run to be mid-way (${receiver.requests.length})`,
  );
  first.kill('SIGKILL');
  await new Promise((resolve) => first.once('exit', resolve));
  const atKill = seen.size;
  assert.ok(atKill < TOTAL, `killed mid-run (${atKill} of ${TOTAL} seen)`);

  const second = startDelivererProcess(configPath);
  children.push(second);
  const beforeRestart = receiver.requests.length;
  await waitUntil(() => receiver.requests.length > beforeRestart, 120_000, 'the restarted run to deliver');
  await waitUntil(
    () => seen.size >= TOTAL,
    120_000,
    () => `all ${TOTAL} events (seen ${seen.size})`,
  );
  await waitUntil(
    () => seenBatched.size >= TOTAL,
    60_000,
    () => `all ${TOTAL} events in batches (${seenBatched.size})`,
  );
  second.kill('SIGTERM');
  await new Promise((resolve) => second.once('exit', resolve));
  await receiver.close();

  await batchReceiver.close();

  for (let i = 0; i < TOTAL; i += 1) assert.ok(seen.has(`k9-${i}`), `k9-${i} delivered`);
  for (let i = 0; i < TOTAL; i += 1) assert.ok(seenBatched.has(`k9-${i}`), `k9-${i} delivered in a batch`);
  const batched = batchReceiver.requests.reduce((n, r) => n + Number(r.headers['x-batch-size']), 0);
  console.log(
    `kill -9 drill: ${atKill} distinct before the kill, ${receiver.requests.length} requests in all for ${TOTAL} events (${receiver.requests.length - TOTAL} duplicates); batched: ${batchReceiver.requests.length} batches, ${batched} events (${batched - TOTAL} duplicates)`,
  );
});
