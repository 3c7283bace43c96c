/**
 * Audiences end to end (docs/reference/audiences.md): audience-sync → `sluice.events` → deliverer →
 * a real webhook receiver, on the real broker.
 * 1. In-process: first sync of 3 users → 3 identifies (true); one left, one joined → exactly 2
 *    (false, true); an identical third sync → none.
 * 2. audience-sync as its own process, killed with SIGKILL in the middle of a chunked sync and once
 *    while a completed sync's identifies are being produced; restarted, the sync resent: every change
 *    reaches the receiver (duplicates carry the same `messageId`), none is lost.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createAudienceSync, identifyMessageId, snakeCase } from '@sluice/audience-sync';
import { parseConfig } from '@sluice/config';
import { createDeliverer } from '@sluice/deliverer';
import { createLogger } from '@sluice/logging';
import type { RunningService } from '@sluice/service-kit';
import {
  startReceiver,
  testBrokers,
  testConfig,
  testServiceContext,
  uniqueName,
  waitUntil,
  sleep,
  type Receiver,
  type ReceivedRequest,
  testKafka,
} from '@sluice/testkit';
import { scrapeMetrics } from '@sluice/testkit';
import { SIGNATURE_HEADER, verifySignature } from '@sluice/webhook-signature';
import { ServiceProcess, writeConfigFile } from '../support/service-process.ts';

const ADMIN = 'e2e-audience-admin-token-of-32-characters-or-more';
const SECRET = 'e2e-audience-secret';
const ROUTE = '/v1/audiences/snapshots';
const IDENTIFY_KEYS = ['context', 'messageId', 'timestamp', 'traits', 'type', 'userId', 'version'];

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

interface Identify {
  version: number;
  type: string;
  userId: string;
  messageId: string;
  timestamp: string;
  traits: Record<string, unknown>;
  context: { audience?: { name: string; key: string; syncId: string } };
}

/** Config-file shape: the given sources, one webhooks destination for all of them, signed. */
function rawConfig(
  sources: string[],
  receiver: Receiver,
  kafka: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    sources: sources.map((id) => ({ id, writeKeys: [`wk-${id}`] })),
    destinations: [
      {
        id: 'hooks',
        type: 'webhooks',
        sourceIds: sources,
        settings: { webhooks: [{ url: receiver.url }], sharedSecret: SECRET },
      },
    ],
    ingest: { adminToken: ADMIN },
    delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
    kafka,
  };
}

async function post(base: string, body: unknown): Promise<number> {
  const res = await fetch(`${base}${ROUTE}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Posts a sync as `chunks` chunks (the last one final); every chunk must be acknowledged (202). */
async function postSync(
  base: string,
  sourceId: string,
  audience: string,
  syncId: string,
  members: string[],
  chunks: number,
  only?: number,
): Promise<void> {
  const size = Math.ceil(members.length / chunks);
  for (let i = 0; i < (only ?? chunks); i++) {
    const status = await post(base, {
      sourceId,
      audience,
      syncId,
      members: members.slice(i * size, (i + 1) * size),
      final: i === chunks - 1,
    });
    assert.equal(status, 202, `chunk ${i} of ${syncId}`);
  }
}

/** A received identify: body parsed, with the checks every delivery must pass (shape, signature, id header). */
function identifyOf(req: ReceivedRequest): Identify {
  const body = JSON.parse(req.body.toString('utf8')) as Identify;
  assert.deepEqual(Object.keys(body).sort(), IDENTIFY_KEYS);
  assert.equal(body.type, 'identify');
  assert.equal(req.headers['x-message-id'], body.messageId);
  assert.ok(verifySignature(SECRET, req.body, String(req.headers[SIGNATURE_HEADER.toLowerCase()])), 'signature');
  return body;
}

const parsed = new WeakMap<Receiver, Identify[]>();
/** Every identify the receiver got so far (each request checked and parsed once), filtered. */
function received(receiver: Receiver, filter: (i: Identify) => boolean = () => true): Identify[] {
  const list = parsed.get(receiver) ?? [];
  parsed.set(receiver, list);
  for (let i = list.length; i < receiver.requests.length; i++) list.push(identifyOf(receiver.requests[i]!));
  return list.filter(filter);
}

const bySync = (syncId: string) => (i: Identify) => i.context.audience?.syncId === syncId;
const pairs = (ids: Identify[], prop: string) =>
  ids.map((i) => [i.userId, i.traits[prop]]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));

test('3 → 2 → 0: identifies reach a real receiver through the deliverer', async () => {
  const receiver = await startReceiver();
  cleanups.push(() => receiver.close());
  const config = testConfig(rawConfig(['web'], receiver));
  const services: RunningService[] = [];
  cleanups.push(async () => {
    for (const s of services.reverse()) await s.close();
  });
  const deliverer = await createDeliverer(testServiceContext('deliverer', config), { port: 0 }).start();
  services.push(deliverer);
  const sync = await createAudienceSync(testServiceContext('audience-sync', config), { port: 0 }).start();
  services.push(sync);
  const base = `http://127.0.0.1:${sync.port}`;
  const name = 'High Value Users';
  const target = { kind: 'audience' as const, sourceId: 'web', name, property: 'high_value_users' };

  await postSync(base, 'web', name, 'sync-1', ['alice', 'bob', 'carol'], 2);
  await receiver.waitFor(3, 20_000);
  const first = received(receiver, bySync('sync-1'));
  assert.deepEqual(pairs(first, 'high_value_users'), [
    ['alice', true],
    ['bob', true],
    ['carol', true],
  ]);
  for (const i of first) {
    assert.deepEqual(i.context, { audience: { name, key: 'high_value_users', syncId: 'sync-1' } });
    assert.equal(i.messageId, identifyMessageId(target, i.userId, 'sync-1'));
    assert.equal(i.version, 1);
    assert.match(i.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  }

  await postSync(base, 'web', name, 'sync-2', ['bob', 'alice', 'dave'], 1); // carol left, dave joined
  await receiver.waitFor(5, 20_000);
  await postSync(base, 'web', name, 'sync-3', ['dave', 'bob', 'alice'], 3); // identical membership
  await waitUntil(
    async () => /sluice_audience_syncs_completed_total\{[^}]*\} 3\b/.test(await scrapeMetrics(base)),
    20_000,
    'sync-3 completed',
  );
  await sleep(2_500); // anything sync-3 produced would be delivered by now
  assert.equal(receiver.requests.length, 5, 'exactly 3 + 2 deliveries');
  assert.deepEqual(pairs(received(receiver, bySync('sync-2')), 'high_value_users'), [
    ['carol', false],
    ['dave', true],
  ]);
  assert.equal(received(receiver, bySync('sync-3')).length, 0);
});

/**
 * Two audience-sync processes, each on its own snapshot and state topics but one shared events
 * topic (one deliverer, one receiver). Each is SIGKILLed once; their restarts overlap, because a
 * killed consumer only leaves its group when its session (30 s) expires.
 *   B: sync 1 of 10,000 in 20 chunks: kill as soon as its identifies start landing on the events
 *      topic (the final processing), restart, resend the whole sync.
 *   A: sync 1 of 4,000 (no kill), then sync 2 with 200 left + 200 joined in 20 chunks: kill after
 *      10 chunks (nothing emitted yet), restart, resend the whole sync.
 */
test('kill -9 mid-sync and during the final processing: every change reaches the receiver', async (t) => {
  const t0 = Date.now();
  const mark = (what: string) => t.diagnostic(`${what}: +${Date.now() - t0} ms`);
  const receiver = await startReceiver();
  cleanups.push(() => receiver.close());
  const dir = mkdtempSync(join(tmpdir(), 'sluice-audiences-e2e-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const prefix = uniqueName('aud-kill');
  const topics = (p: string) => ({
    events: `${prefix}.events`,
    rejected: `${prefix}.rejected`,
    retry: `${prefix}.retry`,
    redeliver: `${prefix}.redeliver`,
    deadLetter: `${prefix}.dead-letter`,
    attempts: `${prefix}.attempts`,
    audiences: `${prefix}.${p}.audiences`,
    audienceState: `${prefix}.${p}.audience-state`,
    delayPrefix: `${prefix}.delay.`,
  });
  const sources = ['src-a', 'src-b'];
  const raw = (p: string) =>
    rawConfig(sources, receiver, {
      clientId: `${prefix}-${p}`,
      partitions: 3,
      replicationFactor: 1,
      topics: topics(p),
    });
  const brokers = testBrokers().join(',');
  const spawn = (p: string) =>
    new ServiceProcess('audience-sync', {
      SLUICE_CONFIG: writeConfigFile(join(dir, `${p}.yaml`), raw(p)),
      KAFKA_BROKERS: brokers,
    });
  const a = spawn('a');
  const b = spawn('b');
  cleanups.push(
    () => a.kill9(),
    () => b.kill9(),
  );

  const deliverer = await createDeliverer(testServiceContext('deliverer', parseConfig(raw('a'))), { port: 0 }).start();
  cleanups.push(() => deliverer.close());
  await Promise.all([a.start(), b.start()]);
  mark('both processes ready');

  const kafka = testKafka({
    clientId: `${prefix}-probe`,
    logger: createLogger({ name: 'probe', level: 'error' }),
  });
  const admin = kafka.admin();
  await admin.connect();
  cleanups.push(() => admin.disconnect());
  const eventsOnTopic = async () =>
    (await admin.fetchTopicOffsets(topics('a').events)).reduce((n, p) => n + Number(p.high) - Number(p.low), 0);

  const audA = 'Cart Abandoners';
  const audB = 'Newsletter Readers';
  const propA = snakeCase(audA);
  const propB = snakeCase(audB);
  const ids = (p: string, n: number, from = 0) => Array.from({ length: n }, (_, i) => `${p}-${from + i}`);

  // B first, while the events topic is quiet: sync 1 in 20 chunks; kill -9 the moment its
  // identifies start to land on the events topic (the final processing), and restart at once.
  const membersB = ids('b-user', 10_000);
  await postSync(b.url, 'src-b', audB, 'b-1', membersB, 20);
  const landed = await waitUntil(async () => await eventsOnTopic(), 20_000, 'B identifies landing');
  await b.kill9();
  const killedB = Date.now();
  mark('B killed');
  t.diagnostic(
    `B killed during the final processing: ${landed} of ${membersB.length} identifies on the topic when the kill was sent, ${await eventsOnTopic()} right after`,
  );
  const restartingB = b.start();

  // A: sync 1 (4,000 members) and the first 10 of 20 chunks of sync 2; kill -9 once A has read them.
  const baseA = ids('a-user', 4_000);
  const membersA2 = [...baseA.slice(200), ...ids('a-user', 200, 4_000)]; // a-user-0..199 left, 4000..4199 joined
  await postSync(a.url, 'src-a', audA, 'a-1', baseA, 20);
  await postSync(a.url, 'src-a', audA, 'a-2', membersA2, 20, 10);
  const diffed = (text: string) => Number(/sluice_audience_members_diffed_total\{[^}]*\} (\d+)/.exec(text)?.[1] ?? 0);
  await waitUntil(
    async () => diffed(await scrapeMetrics(a.url)) >= baseA.length + membersA2.length / 2,
    20_000,
    'A read 10 chunks of sync 2',
  );
  await a.kill9();
  mark('A killed');
  const restartingA = a.start();
  // While A is down: sync 1 is delivered in full, and the unfinished sync 2 emitted nothing.
  await waitUntil(() => received(receiver, bySync('a-1')).length >= baseA.length, 30_000, 'A sync 1 delivered');
  await sleep(500);
  assert.equal(received(receiver, bySync('a-2')).length, 0, 'an unfinished sync emits nothing');
  assert.equal(received(receiver, bySync('a-1')).length, baseA.length);

  // Restart both, resend both syncs in full (the client does not know how far the service got).
  await Promise.all([restartingA, restartingB]);
  await Promise.all([
    postSync(a.url, 'src-a', audA, 'a-2', membersA2, 20),
    postSync(b.url, 'src-b', audB, 'b-1', membersB, 20),
  ]);

  const expectedA2 = new Map<string, boolean>([
    ...ids('a-user', 200).map((u) => [u, false] as const),
    ...ids('a-user', 200, 4_000).map((u) => [u, true] as const),
  ]);
  await waitUntil(
    () => {
      const gotB = new Set(received(receiver, bySync('b-1')).map((i) => i.userId));
      const gotA = new Set(received(receiver, bySync('a-2')).map((i) => i.userId));
      return gotB.size >= membersB.length && gotA.size >= expectedA2.size;
    },
    55_000,
    'every change of a-2 and b-1 at the receiver',
  );
  t.diagnostic(
    `every change arrived ${Date.now() - killedB} ms after B's kill (a killed member leaves its group only when its 30 s session expires)`,
  );
  await sleep(1_500);

  // B: every member exactly once by messageId; repeats (from the kill) share the id.
  const targetB = { kind: 'audience' as const, sourceId: 'src-b', name: audB, property: propB };
  const gotB = received(receiver, bySync('b-1'));
  const idsB = new Map<string, Set<string>>();
  for (const i of gotB) {
    assert.equal(i.traits[propB], true);
    assert.equal(i.messageId, identifyMessageId(targetB, i.userId, 'b-1'));
    idsB.set(i.userId, (idsB.get(i.userId) ?? new Set()).add(i.messageId));
  }
  assert.deepEqual([...idsB.keys()].sort(), [...membersB].sort());
  t.diagnostic(
    `B: ${gotB.length} deliveries for ${membersB.length} changes (${gotB.length - membersB.length} duplicates)`,
  );

  // A: exactly the 400 changes (no identify for the 3,800 unchanged members), right values and ids.
  const targetA = { kind: 'audience' as const, sourceId: 'src-a', name: audA, property: propA };
  const gotA = received(receiver, bySync('a-2'));
  for (const i of gotA) {
    assert.equal(i.traits[propA], expectedA2.get(i.userId), `a-2 ${i.userId}`);
    assert.equal(i.messageId, identifyMessageId(targetA, i.userId, 'a-2'));
  }
  assert.equal(new Set(gotA.map((i) => i.userId)).size, expectedA2.size);
  t.diagnostic(`A: ${gotA.length} deliveries for ${expectedA2.size} changes`);
  assert.equal(a.exits.length + b.exits.length, 2, 'each process died only by the kill');
});
