import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { createRetry, type RetryService } from '@sluice/retry';
import {
  createTestTopics,
  fileKafka,
  receivedEnvelope,
  startReceiver,
  testConfig,
  testKafka,
  testServiceContext,
  waitUntil,
} from '@sluice/testkit';
import { startDelivererProcess } from './deliverer-process.ts';
import { produceEvents } from './kafka-helpers.ts';

// kill -9 of the deliverer in the middle of users' queues (docs/reference/ordering.md): each of 40
// users has 10 events, two of which fail once with 503 (so every user has had a head in the retry
// path and events waiting behind it). After the kill and a restart, every event reached the
// receiver, and per user the order in which the receiver first answered 2xx is acceptance order.

const USERS = 40;
const PER_USER = 10;

const dir = mkdtempSync(join(tmpdir(), 'deliverer-ordering-kill9-'));
const children: ChildProcess[] = [];
const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const close of closers) await close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

it('kill -9 of the deliverer mid-queue, then restart: every event delivered, each user in acceptance order (duplicates allowed)', {
  timeout: 180_000,
}, async () => {
  const applied = new Map<string, string[]>();
  const tries = new Map<string, number>();
  let requests = 0;
  const receiver = await startReceiver({
    behaviour: (req) => {
      requests += 1;
      const id = String(req.headers['x-message-id']);
      const n = (tries.get(id) ?? 0) + 1;
      tries.set(id, n);
      const [, user, index] = /^(u\d+)-(\d+)$/.exec(id)!;
      if ((index === '3' || index === '7') && n === 1) return { status: 503 };
      const list = applied.get(user!) ?? [];
      if (!list.includes(id)) list.push(id);
      applied.set(user!, list);
      return { status: 200 };
    },
  });
  closers.push(() => receiver.close());
  const raw = {
    sources: [{ id: 's-ok9', writeKeys: ['k'] }],
    destinations: [
      {
        id: 'd-ok9',
        type: 'webhooks',
        sourceIds: ['s-ok9'],
        ordering: 'per-user',
        settings: { webhooks: [{ url: receiver.url }] },
      },
    ],
    delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
    retry: { schedule: ['1s'], jitter: 0, tiers: ['1s'] },
  };
  const config = testConfig(raw);
  const configPath = join(dir, 'sluice.yaml');
  writeFileSync(configPath, JSON.stringify({ ...raw, kafka: fileKafka(config) }));
  const kafka = testKafka({ clientId: 'ordering-kill9-test' });
  await createTestTopics(kafka, config);
  const retry: RetryService = await createRetry(testServiceContext('retry', config), { port: 0 }).start();
  closers.unshift(() => retry.close());

  const events = [];
  for (let i = 0; i < PER_USER; i++)
    for (let u = 0; u < USERS; u++)
      events.push(receivedEnvelope({ sourceId: 's-ok9', userId: `u${u}`, messageId: `u${u}-${i}` }));
  await produceEvents(kafka, config.kafka.topics.events, events);

  const first = startDelivererProcess(configPath);
  children.push(first);
  // Mid-queue: every user's event 3 has failed once (its later events wait), few are done.
  await waitUntil(
    () => [...tries.keys()].filter((id) => id.endsWith('-3')).length >= USERS / 2,
    60_000,
    'heads failing',
  );
  first.kill('SIGKILL');
  await new Promise((resolve) => first.once('exit', resolve));
  const atKill = [...applied.values()].reduce((n, l) => n + l.length, 0);
  assert.ok(atKill < USERS * PER_USER, `killed mid-run (${atKill} applied)`);

  const second = startDelivererProcess(configPath);
  children.push(second);
  const total = () => [...applied.values()].reduce((n, l) => n + l.length, 0);
  await waitUntil(() => total() >= USERS * PER_USER, 120_000, `every event applied (${total()})`);
  second.kill('SIGTERM');
  await new Promise((resolve) => second.once('exit', resolve));
  for (let u = 0; u < USERS; u++)
    assert.deepEqual(
      applied.get(`u${u}`),
      Array.from({ length: PER_USER }, (_, i) => `u${u}-${i}`),
      `user u${u} in acceptance order`,
    );
  console.log(
    `ordering kill -9: ${atKill} applied before the kill, ${requests} requests for ${USERS * PER_USER} events (${2 * USERS} planned 503s)`,
  );
});
