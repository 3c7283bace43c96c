// No secret leaves Sluice (docs/deliverer.md, "Endpoint URLs in records"): endpoints whose URLs
// carry a user name, a password and a token, on a real HTTPS server on 127.0.0.1, are held back in
// every way the deliverer holds one back — rate limit, open circuit, Retry-After, stalled
// destination — and dead-lettered when the retry window ends. ingest, deliverer, retry and
// delivery-log run as processes on the real broker. Then the password, the token and the user
// name are looked for everywhere: every record of every topic of the pipeline (attempts, retry,
// delay tiers, redeliveries, dead letters: keys, values and headers), every log line, the
// deliverer's metrics, the delivery log's API answers and, with Chromium, its console pages.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createKafka } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import {
  prefixedTopics,
  selfSignedCert,
  watchTopics,
  startReceiver,
  uniqueName,
  waitUntil,
  type Receiver,
  type ReceivedRequest,
  type TopicWatcher,
} from '@sluice/testkit';
import type { Kafka } from 'kafkajs';
import { ServiceProcess, writeConfigFile, type ServiceName } from '../support/service-process.ts';

const USER = 'hookuser';
const PASSWORD = 'pw-Q7sEcr3t';
const TOKEN = 'tok-Z9sEcr3t';
const API_KEY = 'key-M4sEcr3t';
const SECRETS = [USER, PASSWORD, TOKEN, API_KEY];
const WRITE_KEY = 'redaction-write-key';
const ADMIN_TOKEN = 'redaction-admin-token-of-32-characters-or-more';
const CHROMIUM = '/usr/bin/chromium';

/** Fails naming the secret and where it was found. */
function assertNoSecret(where: string, text: string): void {
  for (const secret of SECRETS) {
    const at = text.indexOf(secret);
    if (at >= 0) assert.fail(`${where} holds ${secret}: …${text.slice(Math.max(0, at - 120), at + 60)}…`);
  }
}

/** Every record of `topics` from the beginning, read until none came for `idleMs`. */
async function readAll(kafka: Kafka, topics: string[], idleMs = 3_000): Promise<string[]> {
  const consumer = kafka.consumer({ groupId: uniqueName('redaction-reader'), maxWaitTimeInMs: 100 });
  const seen: string[] = [];
  let last = Date.now();
  await consumer.connect();
  await consumer.subscribe({ topics, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ topic, message }) => {
      last = Date.now();
      const headers = Object.entries(message.headers ?? {}).map(([k, v]) => `${k}=${String(v)}`);
      seen.push(`${topic} ${message.key?.toString() ?? ''} ${message.value?.toString() ?? ''} ${headers.join(' ')}`);
    },
  });
  await waitUntil(() => Date.now() - last > idleMs, 60_000, 'the topics read to their end');
  await consumer.disconnect();
  return seen;
}

describe('endpoint credentials never leave Sluice, whichever way an endpoint is held back', {
  timeout: 300_000,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-redaction-'));
  const prefix = uniqueName('redact');
  const topics = prefixedTopics(prefix);
  const run = uniqueName('m');
  const services = new Map<ServiceName, ServiceProcess>();
  const logs = new Map<ServiceName, string>();
  let receiver: Receiver;
  let kafka: Kafka;
  /** The attempt records as they are written (one reader for the whole test). */
  let attempts: TopicWatcher;
  const brokers = process.env.KAFKA_BROKERS!;

  /** The endpoints: `ok` answers, `held` asks to wait 2 minutes, `breaker` and `stalled` never answer in time. */
  const behaviour = (req: ReceivedRequest) => {
    const path = req.path.split('?')[0];
    if (path === '/held') return { status: 503, headers: { 'retry-after': '120' }, body: 'busy' };
    if (path === '/breaker' || path === '/stalled') return { status: 200, delayMs: 60_000 };
    return { status: 200, body: 'ok' };
  };
  const secretUrl = (path: string) =>
    `https://${USER}:${PASSWORD}@127.0.0.1:${receiver.port}/${path}?token=${TOKEN}&x=1`;

  const post = async (ids: string[]) => {
    const res = await fetch(`${services.get('ingest')!.url}/v1/batch`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`,
      },
      body: JSON.stringify({
        batch: ids.map((messageId) => ({ type: 'track', messageId, userId: `u-${messageId}`, event: 'Held Back' })),
      }),
    });
    assert.equal(res.status, 200, await res.text());
  };
  const api = async (path: string): Promise<{ status: number; text: string }> => {
    const res = await fetch(`${services.get('delivery-log')!.url}${path}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    return { status: res.status, text: await res.text() };
  };

  before(async () => {
    receiver = await startReceiver({ tls: true, behaviour });
    const caFile = join(dir, 'ca.pem');
    writeFileSync(caFile, selfSignedCert().cert);
    const heldUrlFile = join(dir, 'held-url');
    writeFileSync(heldUrlFile, `${secretUrl('held')}\n`);
    const apiKeyFile = join(dir, 'api-key');
    writeFileSync(apiKeyFile, API_KEY);
    const destination = (id: string, endpoint: Record<string, unknown>) => ({
      id,
      type: 'webhooks',
      sourceIds: ['shop'],
      settings: { webhooks: [endpoint], sharedSecret: 'redaction-signing-secret' },
    });
    const configPath = writeConfigFile(join(dir, 'sluice.yaml'), {
      sources: [{ id: 'shop', writeKeys: [WRITE_KEY] }],
      destinations: [
        destination('ok', { url: secretUrl('ok'), headers: { 'X-Api-Key': { file: apiKeyFile } } }),
        destination('limited', { url: { env: 'REDACTION_LIMITED_URL' }, maxRequestsPerSecond: 1 }),
        destination('held', { url: { file: heldUrlFile } }),
        destination('breaker', { url: secretUrl('breaker') }),
        destination('stalled', { url: secretUrl('stalled') }),
      ],
      kafka: { clientId: prefix, partitions: 2, replicationFactor: 1, topics },
      delivery: {
        // Long enough that `ok` answers in time on a CPU-starved machine: a stall is judged only on
        // others' finished requests, and before the silent endpoints' first timeout opens their breakers.
        timeout: '4s',
        maxInFlightPerPartition: 32,
        circuitBreaker: { failures: 1, cooldown: '5m' },
        caFile,
        ssrf: { allowCidrs: ['127.0.0.0/8'] },
      },
      retry: { window: '8s', schedule: ['30s'], tiers: ['1s', '5s'] },
      deliveryLog: { adminToken: ADMIN_TOKEN },
    });
    kafka = createKafka({
      brokers: brokers.split(','),
      clientId: 'redaction-test',
      logger: createLogger({ name: 'redaction-test', level: 'error' }),
    });
    // Started in order (they race to create topics otherwise); every line each one prints is kept.
    for (const name of ['delivery-log', 'retry', 'deliverer', 'ingest'] as const) {
      const svc = new ServiceProcess(name, {
        SLUICE_CONFIG: configPath,
        KAFKA_BROKERS: brokers,
        LOG_LEVEL: 'info',
        REDACTION_LIMITED_URL: secretUrl('limited'),
      });
      services.set(name, svc);
      logs.set(name, '');
      const child = await svc.spawn();
      const keep = (chunk: Buffer) => logs.set(name, logs.get(name)! + chunk.toString());
      child.stdout!.on('data', keep);
      child.stderr!.on('data', keep);
      await waitUntil(
        async () => {
          if (child.exitCode !== null) throw new Error(`${name} exited ${child.exitCode}: ${logs.get(name)}`);
          return fetch(`${svc.url}/readyz`).then(
            (r) => r.status === 200,
            () => false,
          );
        },
        60_000,
        `${name} ready`,
      );
    }
    attempts = await watchTopics(kafka, [topics.attempts]);
  });

  after(async () => {
    await attempts?.stop();
    await Promise.all([...services.values()].map((s) => s.sigterm()));
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds back, retries and dead-letters with every URL redacted; the requests carry the credentials', async () => {
    const attemptsOf = async () =>
      attempts
        .records(topics.attempts)
        .map((r) => r.value?.toString() ?? '')
        .join('\n');
    // A burst: the two silent destinations stall (every partition crowded, `ok` answering), the
    // rate limit turns events away, the first 503 with Retry-After holds the `held` endpoint.
    await post(Array.from({ length: 150 }, (_, i) => `${run}-a${i}`));
    await waitUntil(
      async () => /"destinationId":"breaker".*"outcome":"retryable"/.test(await attemptsOf()),
      60_000,
      'a timeout opens the breaker',
    );
    // After the first timeouts the breakers are open: new events meet the open circuit.
    await post(Array.from({ length: 20 }, (_, i) => `${run}-b${i}`));
    const outcomes = ['rate_limited', 'retry_after', 'circuit_open', 'destination_stalled'];
    let seen = new Map<string, number>();
    /** The last attempt record of each destination and outcome, for the failure message. */
    const sample = new Map<string, string>();
    const everyKind = async () => {
      seen = new Map();
      for (const m of (await attemptsOf()).matchAll(/^.*"destinationId":"(\w+)".*?"outcome":"(\w+)".*$/gm)) {
        const key = `${m[1]}/${m[2]}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
        sample.set(key, m[0].slice(0, 600));
      }
      return outcomes.every((o) => [...seen.keys()].some((k) => k.endsWith(`/${o}`)));
    };
    await waitUntil(everyKind, 60_000, `attempt records of every kind of hold-back (${outcomes.join(', ')})`).catch(
      (err: Error) =>
        assert.fail(
          `${err.message}; seen: ${JSON.stringify(Object.fromEntries(seen))}; last of each: ${[...sample.values()].join('\n')}`,
        ),
    );
    // The window (8 s) ends for the held-back events: dead letters, in the delivery log too.
    for (const d of ['limited', 'held', 'breaker', 'stalled']) {
      await waitUntil(
        async () =>
          JSON.parse((await api(`/api/v1/messages?destinationId=${d}&state=dead&limit=1`)).text).messages.length > 0,
        90_000,
        `a dead letter of ${d} in the delivery log`,
      );
    }

    const ok = receiver.requests.find((r) => r.path.startsWith('/ok'));
    assert.ok(ok, 'the ok endpoint got requests');
    assert.equal(ok.headers.authorization, `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`);
    assert.equal(ok.headers['x-api-key'], API_KEY);
    assert.ok(ok.path.includes(`token=${TOKEN}`));
    assert.ok(
      receiver.requests.some((r) => r.path.startsWith('/held')),
      'the file URL is used',
    );

    // Every record of every topic of this pipeline, delay tiers included.
    const admin = kafka.admin();
    await admin.connect();
    const names = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    await admin.disconnect();
    assert.ok(names.includes(topics.deadLetter) && names.some((t) => t.startsWith(topics.delayPrefix)));
    const records = await readAll(kafka, names);
    assert.ok(records.length > 500, `${records.length} records read`);
    for (const r of records) assertNoSecret('a topic record', r);
    const deadLetters = records.filter((r) => r.startsWith(`${topics.deadLetter} `));
    assert.ok(deadLetters.length > 0);
    assert.ok(deadLetters.some((r) => r.includes(`https://***@127.0.0.1:${receiver.port}/held?***`)));

    // The delivery log's API: destinations, health, lists, message views, the live stream.
    const destinations = await api('/api/v1/destinations');
    assert.equal(destinations.status, 200);
    assert.match(
      destinations.text,
      new RegExp(`https://\\*\\*\\*@127\\.0\\.0\\.1:${receiver.port}/limited\\?\\*\\*\\*`),
    );
    const answers = [destinations];
    for (const d of ['ok', 'limited', 'held', 'breaker', 'stalled']) {
      answers.push(await api(`/api/v1/destinations/${d}/health`));
      answers.push(await api(`/api/v1/messages?destinationId=${d}&limit=200`));
    }
    answers.push(await api('/api/v1/sources/shop/events?limit=50'));
    const ids = [0, 1, 75, 149].map((i) => `${run}-a${i}`).concat([`${run}-b0`, `${run}-b19`]);
    let attemptsShown = 0;
    for (const id of ids) {
      const view = await api(`/api/v1/messages/shop/${encodeURIComponent(id)}`);
      assert.equal(view.status, 200, view.text);
      attemptsShown += JSON.parse(view.text).attempts.length;
      answers.push(view);
    }
    assert.ok(attemptsShown > 0, 'the message views list attempts');
    for (const a of answers) assertNoSecret('a delivery-log API answer', a.text);

    const metrics = await (await fetch(`${services.get('deliverer')!.url}/metrics`)).text();
    assert.match(metrics, /sluice_deliverer_deferred_total\{destination="stalled",reason="destination_stalled"/);
    assertNoSecret('the deliverer metrics', metrics);
    for (const [name, text] of logs) assertNoSecret(`the ${name} log`, text);
  });

  it('the console pages show the endpoints redacted', {
    skip: existsSync(CHROMIUM) ? false : `no ${CHROMIUM} (the console test installs it)`,
  }, async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage();
      const url = services.get('delivery-log')!.url;
      await page.goto(`${url}/#/`);
      await page.getByLabel('API token').fill(ADMIN_TOKEN);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Destinations' }).waitFor();
      await page.getByText(`/limited?***`).first().waitFor();
      const pages = [
        `#/`,
        `#/message/shop/${run}-b0`,
        `#/message/shop/${run}-a1`,
        '#/dead?sourceId=shop',
        '#/stream/shop',
      ];
      for (const hash of pages) {
        await page.goto(`${url}/${hash}`);
        await page.waitForLoadState('networkidle');
        assertNoSecret(
          `the console page ${hash}`,
          `${await page.content()}\n${await page.locator('body').innerText()}`,
        );
      }
    } finally {
      await browser.close();
    }
  });
});
