import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { AttemptEvent } from '@sluice/envelope';
import { SafeProducer } from '@sluice/kafka';
import { testKafka, uniqueName, waitUntil, type ReceivedRequest } from '@sluice/testkit';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM, systemChromium } from '../support/chromium.ts';
import { DELIVERY_LOG_TOKEN, Pipeline } from '../support/pipeline.ts';

/** Screenshots of the run (gitignored). */
const ARTIFACTS = fileURLToPath(new URL('../../artifacts/delivery-log-console/', import.meta.url));

const executablePath = systemChromium();

/**
 * The console in a real headless browser (Debian's chromium driven by playwright-core) over the
 * whole pipeline: a delivered event's page shows its attempts; Replay adds a new one.
 */
describe('delivery-log console in a browser', {
  skip: executablePath ? false : `no ${CHROMIUM} (apt-get install chromium)`,
  timeout: 240_000,
}, () => {
  let pipeline: Pipeline;
  let browser: Browser;
  let page: Page;
  const run = uniqueName('console');
  const seen = new Map<string, number>();
  const behaviour = (req: ReceivedRequest) => {
    const id = String(req.headers['x-message-id'] ?? '');
    const n = (seen.get(id) ?? 0) + 1;
    seen.set(id, n);
    if (id.endsWith('-gone')) return { status: 404, body: 'no such hook' };
    return n === 1 ? { status: 503, body: 'warming up' } : { status: 200, body: 'ok' };
  };

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    pipeline = await Pipeline.start({
      endpoints: [behaviour],
      services: ['delivery-log', 'deliverer', 'retry', 'ingest'],
      partitions: 2,
      config: {
        retry: { window: '60s', schedule: ['200ms'], tiers: ['1s'] },
        delivery: { timeout: '2s' },
        // The message page shows the caller's trace id: ingest continues the caller's context.
        ingest: { trustTraceContext: true },
      },
      // Lets every call through but one marked hidden (the filtered message's test).
      filter: { where: { not: { field: 'properties.hidden', equals: true } } },
    });
    browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
  });
  after(async () => {
    await browser?.close();
    await pipeline?.close();
  });

  it('shows a delivered message with its attempts, Replay records a new attempt; dead letters replay in bulk', async () => {
    const id = `${run}-1`;
    // Tracing is off in this pipeline: ingest, trusting it, carries the caller's trace context onto the record as it came.
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    await pipeline.postBatch(
      [{ type: 'track', messageId: id, userId: 'u-1', event: 'Console Test', properties: { plan: 'pro' } }],
      { traceparent: `00-${traceId}-b7ad6b7169203331-01` },
    );
    await waitUntil(
      async () => {
        const r = await pipeline.deliveryLog(`/api/v1/messages/ledger/${id}`);
        return r.status === 200 && r.body.deliveries[0]?.state === 'delivered' && r.body.attempts.length === 2;
      },
      60_000,
      'delivered',
    );

    const url = pipeline.service('delivery-log').url;
    await page.goto(`${url}/#/message/ledger/${id}`);
    // Signing in with the keyboard: the token field has a label and the form submits on Enter.
    await page.getByLabel('API token').fill(DELIVERY_LOG_TOKEN);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: `Message ${id}` }).waitFor();
    const attempts = page.locator('tr.attempt');
    await waitUntil(async () => (await attempts.count()) === 2, 10_000, 'two attempt rows');
    assert.match(await attempts.nth(0).innerText(), /HTTP 503/);
    assert.match(await attempts.nth(1).innerText(), /HTTP 200/);
    assert.match(await page.locator('pre').first().innerText(), /Console Test/);
    assert.equal(await page.locator('[data-trace-id]').innerText(), traceId, 'the trace id of the event');
    await page.screenshot({ path: `${ARTIFACTS}message-delivered.png`, fullPage: true });
    assert.doesNotMatch(await page.locator('main').innerText(), /\bnull\b|undefined/, 'no absent part is printed');

    const replay = page.getByRole('button', { name: 'Replay' });
    await replay.focus();
    await page.keyboard.press('Enter');
    await waitUntil(
      async () => (await page.locator('tr.attempt').count()) === 3,
      30_000,
      'the replayed attempt on the page',
    );
    assert.match(await page.locator('tr.attempt').nth(2).innerText(), /HTTP 200/);
    await page.screenshot({ path: `${ARTIFACTS}message-replayed.png`, fullPage: true });

    await page.goto(`${url}/#/`);
    await page.getByRole('heading', { name: 'Destinations' }).waitFor();
    await page.getByRole('cell', { name: pipeline.receivers[0]!.url, exact: true }).waitFor();
    await page.screenshot({ path: `${ARTIFACTS}destinations.png`, fullPage: true });

    const gone = `${run}-gone`;
    await pipeline.postBatch([{ type: 'track', messageId: gone, userId: 'u-2', event: 'Console Dead' }]);
    await waitUntil(
      async () =>
        (await pipeline.deliveryLog(`/api/v1/messages/ledger/${gone}`)).body.deliveries?.[0]?.state === 'dead',
      60_000,
      'dead',
    );
    await page.goto(`${url}/#/dead?sourceId=ledger`);
    await page.getByRole('link', { name: gone }).waitFor();
    await page.getByRole('button', { name: 'Replay all matching dead letters' }).click();
    await page.getByRole('status').getByText('Replayed 1 dead letters').waitFor();
    await page.screenshot({ path: `${ARTIFACTS}dead-letters.png`, fullPage: true });
    assert.doesNotMatch(await page.locator('main').innerText(), /\bnull\b|undefined/, 'no absent part is printed');
    await waitUntil(
      async () => (await pipeline.deliveryLog(`/api/v1/messages/ledger/${gone}`)).body.attempts.length === 2,
      30_000,
      'the bulk-replayed attempt',
    );

    await page.goto(`${url}/#/stream/ledger`);
    await page.getByText('Console Test').first().waitFor();
    await page.screenshot({ path: `${ARTIFACTS}live-events.png`, fullPage: true });
  });

  it('shows each destination and endpoint state and drives pause, resume, disable and enable with a reason', async () => {
    const url = pipeline.service('delivery-log').url;
    const endpoint = pipeline.receivers[0]!.url;
    await page.goto(`${url}/#/`);
    await page.getByRole('heading', { name: 'Destinations' }).waitFor();
    const destinationState = page.locator('.destination-state p');
    assert.match(await destinationState.innerText(), /State: active/);

    // Pause with a reason, from the keyboard: the reason field, then the Pause button.
    await page.getByLabel('Reason (ledger-hooks)').fill('customer maintenance');
    await page.getByRole('button', { name: 'Pause ledger-hooks' }).focus();
    await page.keyboard.press('Enter');
    await waitUntil(
      // Recorded by the name of the token the console was given: the admin's (docs/reference/tokens.md).
      async () => /paused since .* by admin: customer maintenance/.test(await destinationState.innerText()),
      10_000,
      'the page shows the pause',
    );
    const api = async () => (await pipeline.deliveryLog('/api/v1/destinations')).body.destinations[0];
    assert.equal((await api()).state.state, 'paused');
    await page.screenshot({ path: `${ARTIFACTS}destination-paused.png`, fullPage: true });
    // A paused destination offers Resume and Disable, not Pause.
    assert.equal(await page.getByRole('button', { name: 'Pause ledger-hooks' }).count(), 0);
    await page.getByLabel('Reason (ledger-hooks)').fill('maintenance over');
    await page.getByRole('button', { name: 'Resume ledger-hooks' }).click();
    await waitUntil(
      async () => /active since .* by admin: maintenance over/.test(await destinationState.innerText()),
      10_000,
      'the page shows the resume',
    );

    // One endpoint: disable, then enable; the row shows its state.
    const row = page.locator('tr', { has: page.getByRole('cell', { name: endpoint, exact: true }) });
    await page.getByLabel(`Reason (${endpoint})`).fill('certificate expired');
    await page.getByRole('button', { name: `Disable ${endpoint}` }).click();
    await waitUntil(
      async () =>
        /disabled since .* by admin: certificate expired/.test(await row.locator('.endpoint-state').innerText()),
      10_000,
      'the row shows the endpoint disabled',
    );
    assert.equal((await api()).endpointStates[0].state, 'disabled');
    // Submitting without a reason is refused by the form: nothing is sent.
    await page.getByRole('button', { name: `Enable ${endpoint}` }).click();
    assert.equal((await api()).endpointStates[0].state, 'disabled');
    await page.getByLabel(`Reason (${endpoint})`).fill('renewed');
    await page.getByRole('button', { name: `Enable ${endpoint}` }).click();
    await waitUntil(async () => (await api()).endpointStates[0].state === 'active', 10_000, 'enabled');
    // The page reloads after the action: wait for it, so the test below is sent from the row that stays.
    await waitUntil(
      async () => /active since .* by admin: renewed/.test(await row.locator('.endpoint-state').innerText()),
      10_000,
      'the row shows the endpoint enabled',
    );

    // A test event to the endpoint: its answer (the receiver's first answer to an id is a 503) shown in the row.
    const before = pipeline.receivers[0]!.requests.length;
    await page.getByRole('button', { name: `Send a test event to ${endpoint}` }).click();
    const tested = row.locator('.test-result');
    let shown = '';
    await waitUntil(
      async () => /HTTP 503 in \d+ ms \(not a 2xx\)/.test((shown = await tested.innerText())),
      10_000,
      () => `the row shows the test answer (it shows ${JSON.stringify(shown)})`,
    );
    assert.match(await tested.innerText(), /warming up/);
    const sent = pipeline.receivers[0]!.requests.slice(before);
    assert.equal(sent.length, 1, 'one request, no retry');
    assert.match(String(sent[0]!.headers['x-message-id']), /^sluice-test-/);
    await page.screenshot({ path: `${ARTIFACTS}destination-tested.png`, fullPage: true });
    const actions = (await pipeline.deliveryLog('/api/v1/destination-actions')).body.actions;
    assert.deepEqual(
      actions.slice(0, 4).map((a: { action: string; by: string; byTokenId: string }) => [a.action, a.by, a.byTokenId]),
      [
        ['enable', 'admin', 'admin'],
        ['disable', 'admin', 'admin'],
        ['resume', 'admin', 'admin'],
        ['pause', 'admin', 'admin'],
      ],
    );
    // The page's recent actions: newest first, each by the token's name and id, with its reason.
    const recent = page.locator('section[aria-labelledby="recent-actions"] tr.action');
    await waitUntil(
      async () => (await recent.count()) >= 4 && /enable/.test(await recent.first().innerText()),
      10_000,
      'the page lists the actions',
    );
    const cells = await recent.first().locator('td').allInnerTexts();
    assert.deepEqual(cells.slice(1), ['ledger-hooks', endpoint, 'enable', 'admin', 'admin', 'renewed']);
  });

  it("a batched attempt shows its batch id, which opens the batch's events with their state", async () => {
    // Attempt records of one batch written straight onto the attempts topic, as a batching deliverer writes them.
    const batchId = `${run}-batch`;
    const ids = [`${run}-b1`, `${run}-b2`];
    const record = (messageId: string, status: number): AttemptEvent => ({
      messageId,
      sourceId: 'ledger',
      destinationId: 'ledger-hooks',
      eventType: 'track',
      endpoint: pipeline.receivers[0]!.url,
      attempt: 1,
      outcome: status < 300 ? 'success' : 'retryable',
      status,
      latencyMs: 7,
      at: new Date().toISOString(),
      batchId,
      batchSize: 2,
    });
    const producer = new SafeProducer(testKafka({ brokers: pipeline.brokers.split(',') }));
    await producer.connect();
    try {
      await producer.send(pipeline.topics.attempts!, [
        { key: 'ledger:b', value: JSON.stringify(record(ids[0]!, 200)) },
        { key: 'ledger:b', value: JSON.stringify(record(ids[1]!, 503)) },
      ]);
    } finally {
      await producer.disconnect();
    }
    await waitUntil(
      async () => (await pipeline.deliveryLog(`/api/v1/batches/${batchId}`)).body.events?.length === 2,
      30_000,
      'the batch in the log',
    );
    const url = pipeline.service('delivery-log').url;
    await page.goto(`${url}/#/message/ledger/${ids[1]}`);
    await page.getByRole('heading', { name: `Message ${ids[1]}` }).waitFor();
    const row = page.locator('tr.attempt');
    assert.match(await row.innerText(), /HTTP 503/);
    await row.getByRole('link', { name: batchId }).click();
    await page.getByRole('heading', { name: `Batch ${batchId}` }).waitFor();
    const events = page.locator('tr.batch-event');
    assert.equal(await events.count(), 2);
    assert.match(await events.nth(0).innerText(), new RegExp(`${ids[0]}.*delivered.*HTTP 200`, 's'));
    assert.match(await events.nth(1).innerText(), new RegExp(`${ids[1]}.*retrying.*HTTP 503`, 's'));
    assert.doesNotMatch(await page.locator('main').innerText(), /\bnull\b|undefined/, 'no absent part is printed');
    await page.screenshot({ path: `${ARTIFACTS}batch.png`, fullPage: true });
    await events.nth(0).getByRole('link', { name: ids[0] }).click();
    await page.getByRole('heading', { name: `Message ${ids[0]}` }).waitFor();
  });

  it("a call the destination's filter refused shows as filtered, with no attempt, and is found by that state", async () => {
    const id = `${run}-hidden`;
    await pipeline.postBatch([
      { type: 'track', messageId: id, userId: 'u-3', event: 'Console Hidden', properties: { hidden: true } },
    ]);
    await waitUntil(
      async () =>
        (await pipeline.deliveryLog(`/api/v1/messages/ledger/${id}`)).body.deliveries?.[0]?.state === 'filtered',
      60_000,
      'filtered',
    );
    const url = pipeline.service('delivery-log').url;
    await page.goto(`${url}/#/message/ledger/${id}`);
    await page.getByRole('heading', { name: `Message ${id}` }).waitFor();
    assert.equal(await page.locator('.state-filtered').innerText(), 'filtered');
    assert.equal(await page.locator('tr.attempt').count(), 0, 'no attempt');
    await page.screenshot({ path: `${ARTIFACTS}message-filtered.png`, fullPage: true });
    await page.goto(`${url}/#/messages`);
    await page.getByLabel('State').selectOption('filtered');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: id }).waitFor();
    assert.equal(seen.has(id), false, 'the endpoint never got it');
  });

  it('a section that answers slowly never replaces the one the user went to meanwhile', async () => {
    const url = pipeline.service('delivery-log').url;
    // The real server's answer to Destinations, held until the user has moved on to Messages.
    let asked = false;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const destinations = '**/api/v1/destinations';
    await page.route(destinations, async (route) => {
      asked = true;
      const response = await route.fetch();
      await released;
      await route.fulfill({ response });
    });
    try {
      await page.goto(`${url}/#/messages`);
      await page.getByLabel('API token').fill(DELIVERY_LOG_TOKEN);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Messages' }).waitFor();
      await page.getByRole('link', { name: 'Destinations', exact: true }).click();
      await waitUntil(async () => asked, 10_000, 'the console asked for the destinations');
      await page.getByRole('link', { name: 'Messages', exact: true }).click();
      await page.getByRole('heading', { name: 'Messages' }).waitFor();
      const answered = page.waitForEvent('requestfinished', (r) => r.url().endsWith('/api/v1/destinations'));
      release();
      await answered;
      // Let the page handle the late answer (a few tasks) before looking.
      await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)));
      assert.equal(new URL(page.url()).hash, '#/messages');
      assert.equal(await page.locator('main h2').innerText(), 'Messages', 'the late Destinations answer is dropped');
      assert.equal(await page.getByRole('heading', { name: 'Destinations' }).count(), 0);
    } finally {
      release();
      await page.unroute(destinations);
    }
  });
});
