import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCli } from '@sluice/cli';
import { createDeliveryLog, type DeliveryLogService, openDatabase } from '@sluice/delivery-log';
import { retryStateToHeaders } from '@sluice/envelope';
import { SafeProducer } from '@sluice/kafka';
import {
  metricSum,
  scrapeMetrics,
  testAttempt,
  testConfig,
  testEnvelope,
  testKafka,
  testKeyring,
  testServiceContext,
  uniqueName,
  waitUntil,
} from '@sluice/testkit';
import { chromium, type Page } from 'playwright-core';
import { memoryIo } from '../ops/cli-io.ts';
import { CHROMIUM, systemChromium } from '../support/chromium.ts';

const TOKEN = 'ledger-test-token-of-32-characters-or-more';
const KEY_VARIABLE = 'SLUICE_LEDGER_TEST_KEY';
const WINDOW_MS = 60_000;
const GRACE_MS = 30_000;
const ARTIFACTS = fileURLToPath(new URL('../../artifacts/delivery-log-console/', import.meta.url));

/**
 * One event's trail stops (docs/operations.md, "The ledger"): its event and one retryable attempt
 * are written straight onto the topics, and no retry or dead letter ever follows. Beside it an event
 * delivered on its second attempt and one dead-lettered. With a shrunk window and grace and the
 * service's clock moved past them, the API, the gauge, `sluice audit` and the console report the
 * stopped one unaccounted, and only it; a rebuild from the topics gives the same figures.
 */
describe('the ledger reports an event whose trail stopped', { timeout: 180_000 }, () => {
  const config = testConfig({
    sources: [{ id: 'web', writeKeys: ['k'] }],
    destinations: [
      { id: 'hooks', type: 'webhooks', sourceIds: ['web'], settings: { webhooks: [{ url: 'http://127.0.0.1:9/a' }] } },
    ],
    retry: { window: WINDOW_MS },
    deliveryLog: { adminToken: TOKEN, ledger: { grace: GRACE_MS, interval: 100 } },
    runtimeDestinations: testKeyring(KEY_VARIABLE),
  });
  const producer = new SafeProducer(testKafka());
  const run = uniqueName('ledger');
  const id = (name: string) => `${run}-${name}`;
  const start = Date.now();
  let clock = start;
  let service: DeliveryLogService;
  const base = () => `http://127.0.0.1:${service.port}`;
  const get = async (path: string, svc = service) => {
    const res = await fetch(`http://127.0.0.1:${svc.port}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    return { status: res.status, body: (await res.json()) as any };
  };
  const range = `from=${start - 60_000}&to=${start + 60_000}`;

  const event = (messageId: string, at: number) => {
    const iso = new Date(at).toISOString();
    const call = { sourceId: 'web', messageId, userId: 'u1', event: 'Bought', timestamp: iso, receivedAt: iso };
    return { key: messageId, value: JSON.stringify(testEnvelope(call)) };
  };
  const attempt = (messageId: string, n: number, status: number, at: number) => ({
    key: messageId,
    value: JSON.stringify(
      testAttempt({ messageId, sourceId: 'web', attempt: n, status, at: new Date(at).toISOString() }),
    ),
  });

  /** A read token of the tenant `web` and `hooks` are in (`default`): it sees the same ledger. */
  let tenantToken: string;

  before(async () => {
    await producer.connect();
    service = await createDeliveryLog(testServiceContext('delivery-log', config), {
      port: 0,
      now: () => clock,
    }).start();
    const t = config.kafka.topics;
    await producer.send(t.events, [
      event(id('delivered'), start - 3_000),
      event(id('dead'), start - 2_000),
      event(id('stopped'), start - 1_000),
    ]);
    await producer.send(t.attempts, [
      attempt(id('delivered'), 1, 503, start - 2_900),
      attempt(id('delivered'), 2, 200, start - 2_800),
      attempt(id('dead'), 1, 404, start - 1_900),
      // The stopped trail: a retryable attempt, and nothing after it.
      attempt(id('stopped'), 1, 503, start - 900),
    ]);
    await producer.send(t.deadLetter, [
      {
        key: id('dead'),
        value: '{}',
        headers: retryStateToHeaders({
          messageId: id('dead'),
          sourceId: 'web',
          destinationId: 'hooks',
          eventType: 'track',
          endpoints: [],
          firstAttemptAt: start - 1_900,
          attempts: 1,
          history: [],
          deadReason: 'permanent_failure',
          deadAt: start - 1_800,
        }),
      },
    ]);
    await waitUntil(
      async () => {
        const { body } = await get(`/api/v1/ledger?${range}`);
        const hooks = body.totals?.[0];
        return hooks?.accepted === 3 && hooks.delivered === 1 && hooks.dead === 1;
      },
      60_000,
      'the log has read the three trails',
    );
    const created = await fetch(`${base()}/api/v1/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'default-reader', tenant: 'default', role: 'read' }),
    });
    assert.equal(created.status, 201);
    tenantToken = ((await created.json()) as { secret: string }).secret;
  });
  after(async () => {
    await service?.close();
    await producer.disconnect();
  });

  /** A ledger gauge of `hooks`, as the service's /metrics shows it now. */
  const hooksGauge = async (name: string) =>
    metricSum(
      (await scrapeMetrics(base()))
        .split('\n')
        .filter((l) => l.includes('destination="hooks"'))
        .join('\n'),
      `sluice_delivery_log_${name}`,
    );
  const unaccountedGauge = () => hooksGauge('unaccounted_events');

  /** `sluice audit` over the three trails with `token`: the row of `hooks` and the stopped one unaccounted; what it printed. */
  const auditAs = async (token: string) => {
    const io = memoryIo('', { SLUICE_API_URL: base(), SLUICE_API_TOKEN: token });
    const code = await runCli(
      ['audit', '--from', new Date(start - 60_000).toISOString(), '--to', String(start + 60_000)],
      io.io,
    );
    assert.equal(code, 0, io.stderr());
    const lines = io.stdout().split('\n');
    assert.match(lines.find((l) => l.startsWith('web '))!, /^web\s+hooks\s+3\s+1\s+0\s+1\s+1\s+0\s+1\s/);
    assert.ok(io.stdout().includes(`web/${id('stopped')} -> hooks  retry_stopped`), io.stdout());
    return io.stdout();
  };

  /** The console's Ledger page signed in with `token`, once it shows the one unaccounted delivery. */
  const onLedgerPage = async (token: string, use: (page: Page) => Promise<void>) => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
      await page.goto(`${base()}/#/ledger`);
      await page.getByLabel('API token').fill(token);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Unaccounted now: 1' }).waitFor();
      await use(page);
    } finally {
      await browser.close();
    }
  };

  it('within the window and grace the stopped event is in flight, not unaccounted', async () => {
    const { body } = await get(`/api/v1/ledger?${range}`);
    assert.deepEqual(
      [body.totals[0].inFlight, body.totals[0].unaccounted],
      [1, 0],
      'in the retry path: its window runs from its first attempt',
    );
    assert.equal((await get('/api/v1/ledger/unaccounted')).body.total, 0);
    await waitUntil(async () => (await hooksGauge('in_flight_events')) === 1, 10_000, 'the in-flight gauge');
    assert.equal(await unaccountedGauge(), 0);
  });

  it('past window and grace the API, the gauge, `sluice audit` and the console report it, and only it', async () => {
    clock = start + WINDOW_MS + GRACE_MS + 1_000;
    const ledger = await get(`/api/v1/ledger?${range}`);
    assert.equal(ledger.status, 200);
    const { bucketStart: _, ...hooks } = ledger.body.totals[0];
    assert.deepEqual(
      { ...hooks, oldestUnsettledAt: undefined, oldestUnsettledAgeSeconds: undefined },
      {
        sourceId: 'web',
        destinationId: 'hooks',
        accepted: 3,
        delivered: 1,
        filtered: 0,
        dead: 1,
        inFlight: 1,
        parked: 0,
        unaccounted: 1,
        oldestUnsettledAt: undefined,
        oldestUnsettledAgeSeconds: undefined,
      },
    );
    const open = await get('/api/v1/ledger/unaccounted');
    assert.equal(open.body.total, 1);
    assert.deepEqual(
      open.body.unaccounted.map((u: any) => [u.messageId, u.state, u.reason, u.attempts, u.lastError]),
      [[id('stopped'), 'retrying', 'retry_stopped', 1, 'http_503']],
    );
    const bad = await get('/api/v1/ledger?bucket=7s');
    assert.deepEqual([bad.status, bad.body.field], [400, 'bucket']);

    await waitUntil(async () => (await unaccountedGauge()) === 1, 10_000, 'the unaccounted gauge shows it');

    const printed = await auditAs(TOKEN);
    assert.ok(printed.includes('unaccounted now'), printed);
    assert.ok(!printed.includes(id('dead')) && !printed.includes(id('delivered')));
  });

  it('the console lists it, linking to its message page', {
    skip: systemChromium() ? false : `no ${CHROMIUM}`,
  }, async () => {
    await onLedgerPage(TOKEN, async (page) => {
      const rows = page.locator('tr.unaccounted-delivery');
      assert.equal(await rows.count(), 1);
      assert.match(await rows.first().innerText(), /retry_stopped/);
      const figure = page.locator('tr.ledger-row td[data-figure="unaccounted"]');
      assert.equal(await figure.innerText(), '1');
      await page.screenshot({ path: `${ARTIFACTS}ledger.png`, fullPage: true });
      await rows
        .first()
        .getByRole('link', { name: id('stopped') })
        .click();
      await page.getByRole('heading', { name: new RegExp(id('stopped')) }).waitFor();
    });
  });

  it('a tenant token gets the same from `sluice audit` and the console, without naming a destination', async () => {
    await auditAs(tenantToken);
    if (!systemChromium()) return;
    await onLedgerPage(tenantToken, async (page) => {
      assert.equal(await page.locator('tr.unaccounted-delivery').count(), 1);
      await page.screenshot({ path: `${ARTIFACTS}ledger-tenant.png`, fullPage: true });
    });
  });

  it('a rebuild from the topics gives the same figures', async () => {
    const fresh = await openDatabase({});
    const again = await createDeliveryLog(testServiceContext('delivery-log', config), {
      port: 0,
      now: () => clock,
      sql: fresh,
    }).start();
    try {
      const figures = async (svc: DeliveryLogService) => {
        const { body } = await get(`/api/v1/ledger?${range}`, svc);
        const open = await get('/api/v1/ledger/unaccounted', svc);
        return { totals: body.totals, buckets: body.buckets, unaccounted: open.body };
      };
      const original = await figures(service);
      await waitUntil(
        async () => JSON.stringify(await figures(again)) === JSON.stringify(original),
        30_000,
        'the rebuilt log has the same figures',
      );
    } finally {
      await again.close();
      await fresh.close();
    }
  });
});
