import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Receiver, startReceiver, uniqueName, waitUntil } from '@sluice/testkit';
import { type Browser, chromium, type Page } from 'playwright-core';
import { CHROMIUM, systemChromium } from '../support/chromium.ts';
import { parse } from 'yaml';
import { Pipeline, runtimeKeyring } from '../support/pipeline.ts';
import { ServiceProcess, writeConfigFile } from '../support/service-process.ts';

/** Screenshots of the run (gitignored). */
const ARTIFACTS = fileURLToPath(new URL('../../artifacts/delivery-log-console/', import.meta.url));
const KEY_VARIABLE = 'SLUICE_E2E_CONSOLE_PORTAL_KEY';
/** Generous waits for what the product does not bound (a first delivery) on a busy machine. */
const DELIVERED_WITHIN_MS = 60_000;
/** Tenant A is the pipeline's own: its `ledger` source and `ledger-hooks` destination, in the default tenant. */
const TENANT_A = 'default';
const B = { tenant: 'tenant-b', sourceId: 'b-shop', destinationId: 'b-hooks' };

const executablePath = systemChromium();

/**
 * Portal links in a real headless browser over the real stack (Kafka, the delivery log, a deliverer,
 * ingest, receivers on 127.0.0.1): a link minted through the API for tenant A opens the console on
 * A's destinations and messages only (tenant B's, made beside them, never appear), keeps the token
 * out of the address bar, leaves the operator's pages out, and replays and pauses there; a link past
 * its expiry, with one character changed, or signed by a key no longer in the ring (a delivery log
 * whose keyring holds only a newer key) gets a page saying it cannot be used.
 */
describe('portal links in the delivery-log console', {
  skip: executablePath ? false : `no ${CHROMIUM} (apt-get install chromium)`,
  timeout: 300_000,
}, () => {
  let pipeline: Pipeline;
  let browser: Browser;
  let receiver: Receiver;
  let messageA = '';
  let messageB = '';

  const logUrl = () => pipeline.service('delivery-log').url;
  /** A link minted by the admin through the API. */
  const mint = async (body: Record<string, unknown>) => {
    const minted = await pipeline.deliveryLog('/api/v1/portal-links', { method: 'POST', body });
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    return minted.body as { url: string; token: string; expiresAt: string; id: string };
  };
  /** A fresh tab (its own sessionStorage) opened on `url`. */
  const open = async (url: string): Promise<Page> => {
    const context = await browser.newContext({ viewport: { width: 1366, height: 800 } });
    const page = await context.newPage();
    await page.goto(url);
    return page;
  };
  /** What the page shows and holds: none of it may name B's things. */
  const assertNothingOfB = async (page: Page, where: string) => {
    const seen = `${await page.content()}\n${await page.locator('body').innerText()}`;
    for (const id of [B.tenant, B.sourceId, B.destinationId, messageB])
      assert.ok(!seen.includes(id), `${where}: ${id}`);
  };
  /** The status of an API call made with a bearer token. */
  const statusWith = async (token: string) =>
    (await fetch(`${logUrl()}/api/v1/destinations`, { headers: { authorization: `Bearer ${token}` } })).status;

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    receiver = await startReceiver({ behaviour: () => ({ status: 200, body: 'b received' }) });
    pipeline = await Pipeline.start({
      endpoints: [() => ({ status: 200, body: 'ok' })],
      services: ['delivery-log', 'deliverer', 'ingest'],
      partitions: 2,
      ...runtimeKeyring(KEY_VARIABLE),
    });
    // Tenant B: a runtime source and destination of its own, and an event of it delivered.
    const source = await pipeline.deliveryLog('/api/v1/source-definitions', {
      method: 'POST',
      body: { id: B.sourceId, name: 'B shop', tenant: B.tenant },
    });
    assert.equal(source.status, 201, JSON.stringify(source.body));
    const writeKey = source.body.writeKey.key as string;
    const destination = await pipeline.deliveryLog('/api/v1/destination-definitions', {
      method: 'POST',
      body: {
        id: B.destinationId,
        tenant: B.tenant,
        type: 'webhooks',
        sourceIds: [B.sourceId],
        settings: { webhooks: [{ url: receiver.url }] },
      },
    });
    assert.equal(destination.status, 201, JSON.stringify(destination.body));
    messageA = pipeline.nextMessageId();
    messageB = `b-${pipeline.nextMessageId()}`;
    assert.equal(
      (await pipeline.postBatch([{ type: 'track', messageId: messageA, userId: 'u-a', event: 'A' }])).status,
      200,
    );
    const asB = { authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}` };
    await waitUntil(
      async () =>
        (await pipeline.postBatch([{ type: 'track', messageId: messageB, userId: 'u-b', event: 'B' }], asB)).status ===
        200,
      10_000,
      "B's write key accepted by ingest",
    );
    const delivered = async (sourceId: string, messageId: string) =>
      (await pipeline.deliveryLog(`/api/v1/messages/${sourceId}/${messageId}`)).body.deliveries?.[0]?.state ===
      'delivered';
    await waitUntil(
      async () => (await delivered('ledger', messageA)) && (await delivered(B.sourceId, messageB)),
      DELIVERED_WITHIN_MS,
      "A's and B's events delivered",
    );
    browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    await pipeline?.close();
    await receiver?.close();
  });

  it("shows tenant A's destinations and messages only, without the operator's pages; replay and pause work", async () => {
    const link = await mint({ tenant: TENANT_A, ttlMs: 600_000 });
    assert.equal(link.url, `${logUrl()}/console/#portal=${link.token}`);
    const page = await open(link.url);
    await page.getByRole('heading', { name: 'Destinations' }).waitFor();
    // The token left the address bar; the tab keeps it.
    assert.ok(!page.url().includes(link.token), page.url());
    assert.ok(await page.evaluate((t) => Object.values(sessionStorage).includes(t), link.token));
    await page.getByText(`Portal of ${TENANT_A} (expires`).waitFor();
    await page.getByRole('heading', { name: /\(ledger-hooks\)/ }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'New destination' }).count(), 0, 'no New destination');
    assert.equal(await page.getByRole('link', { name: 'Ledger' }).count(), 0, 'no global ledger');
    assert.equal(await page.getByLabel('API token').count(), 0, 'no token form');
    await page.screenshot({ path: `${ARTIFACTS}portal-destinations.png`, fullPage: true });
    await assertNothingOfB(page, 'Destinations');

    await page.goto(`${logUrl()}/console/#/messages`);
    await page.getByRole('link', { name: messageA }).waitFor();
    await assertNothingOfB(page, 'Messages');

    // Replay: a new attempt appears on the message's page.
    await page.getByRole('link', { name: messageA }).click();
    await page.getByRole('heading', { name: `Message ${messageA}` }).waitFor();
    const before = await page.locator('tr.attempt').count();
    await page.getByRole('button', { name: 'Replay' }).click();
    await waitUntil(
      async () => (await page.locator('tr.attempt').count()) > before,
      30_000,
      'the replayed attempt on the page',
    );
    await assertNothingOfB(page, 'Message');
    const replayed = await pipeline.deliveryLog(`/api/v1/messages/ledger/${messageA}`);
    assert.ok(replayed.body.replays.length >= 1, 'the replay is recorded');

    // Pause, recorded by the link's name, then Resume.
    await page.goto(`${logUrl()}/console/#/`);
    await page.getByLabel('Reason (ledger-hooks)').fill('customer maintenance');
    await page.getByRole('button', { name: 'Pause ledger-hooks' }).click();
    await page.getByRole('button', { name: 'Resume ledger-hooks' }).waitFor();
    // The action list is the log's database: it shows the pause once kept there.
    let paused: { action: string; by: string; byTokenId: string } | undefined;
    await waitUntil(
      async () => {
        const actions = await pipeline.deliveryLog('/api/v1/destination-actions');
        paused = (actions.body.actions as NonNullable<typeof paused>[]).find((a) => a.action === 'pause');
        return paused !== undefined;
      },
      30_000,
      'the pause in the action list',
    );
    assert.equal(paused?.by, `portal:${link.id} by admin`);
    assert.equal(paused?.byTokenId, link.id, "the link's id");
    // The page's recent actions show it too (listed as the page reloads after the pause), by the link's name and id.
    const recent = page.locator('section[aria-labelledby="recent-actions"] tr.action');
    await recent.first().getByText('customer maintenance').waitFor();
    assert.deepEqual((await recent.first().locator('td').allInnerTexts()).slice(1, 7), [
      'ledger-hooks',
      '–',
      'pause',
      `portal:${link.id} by admin`,
      link.id,
      'customer maintenance',
    ]);
    await page.getByLabel('Reason (ledger-hooks)').fill('maintenance over');
    await page.getByRole('button', { name: 'Resume ledger-hooks' }).click();
    await page.getByRole('button', { name: 'Pause ledger-hooks' }).waitFor();
    await page.context().close();
  });

  it('refuses a link past its expiry, and one with a character changed, with a page saying so', async () => {
    const short = await mint({ tenant: TENANT_A, ttlMs: 1_000 });
    // The link's own lifetime: the API refuses it from its expiry on.
    await waitUntil(async () => (await statusWith(short.token)) === 401, 10_000, 'the short link refused');
    const expired = await open(short.url);
    await expired.getByRole('heading', { name: 'This portal link cannot be used' }).waitFor();
    assert.match(await expired.getByRole('alert').innerText(), /expired/);
    assert.ok(!expired.url().includes(short.token));
    await expired.screenshot({ path: `${ARTIFACTS}portal-expired.png`, fullPage: true });
    await expired.context().close();

    const good = await mint({ tenant: TENANT_A, ttlMs: 600_000 });
    // A character inside the signature (the last one may only carry padding bits).
    const at = good.token.length - 5;
    const changed = `${good.token.slice(0, at)}${good.token[at] === 'A' ? 'B' : 'A'}${good.token.slice(at + 1)}`;
    assert.equal(await statusWith(changed), 401);
    const tampered = await open(`${logUrl()}/console/#portal=${changed}`);
    await tampered.getByRole('heading', { name: 'This portal link cannot be used' }).waitFor();
    assert.match(await tampered.getByRole('alert').innerText(), /not valid/);
    assert.equal(await tampered.getByRole('heading', { name: 'Destinations' }).count(), 0);
    await tampered.context().close();
  });

  it('refuses a link signed by a key the ring no longer holds, with the page saying so', async () => {
    const link = await mint({ tenant: TENANT_A, ttlMs: 600_000 });
    // A delivery log whose ring was rotated to k2 with k1 dropped (its own catalog topic, so it has
    // no record encrypted under k1 to read).
    const raw = parse(readFileSync(pipeline.configPath, 'utf8')) as { kafka: { topics: Record<string, string> } };
    raw.kafka.topics.destinations = uniqueName('portal-rotated-destinations');
    const variable = 'SLUICE_E2E_CONSOLE_PORTAL_K2';
    const rotated = new ServiceProcess('delivery-log', {
      SLUICE_CONFIG: writeConfigFile(`${pipeline.configPath}.rotated.yaml`, {
        ...raw,
        runtimeDestinations: { keyring: [{ id: 'k2', key: { env: variable } }] },
      }),
      KAFKA_BROKERS: pipeline.brokers,
      [variable]: randomBytes(32).toString('hex'),
    });
    await rotated.start();
    try {
      const page = await open(`${rotated.url}/console/#portal=${link.token}`);
      await page.getByRole('heading', { name: 'This portal link cannot be used' }).waitFor();
      assert.match(await page.getByRole('alert').innerText(), /not valid/);
      await page.context().close();
      // The ring that still holds k1 accepts it.
      assert.equal(await statusWith(link.token), 200);
    } finally {
      await rotated.sigterm();
    }
  });
});
