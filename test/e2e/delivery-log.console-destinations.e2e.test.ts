import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { redactUrl } from '@sluice/logging';
import { type Receiver, startReceiver, uniqueName, waitUntil } from '@sluice/testkit';
import { verifySignature } from '@sluice/webhook-signature';
import { type Browser, chromium, type Page, type Request } from 'playwright-core';
import { CHROMIUM, systemChromium } from '../support/chromium.ts';
import { DELIVERY_LOG_TOKEN, Pipeline } from '../support/pipeline.ts';

/** Screenshots of the run (gitignored). */
const ARTIFACTS = fileURLToPath(new URL('../../artifacts/delivery-log-console/', import.meta.url));
const KEY_VARIABLE = 'SLUICE_E2E_CONSOLE_DESTINATIONS_KEY';
const DEFINITIONS = '/api/v1/destination-definitions';
/** Generous waits for what the product does not bound (a first delivery) on a busy machine. */
const DELIVERED_WITHIN_MS = 60_000;

const executablePath = systemChromium();

/**
 * The console's runtime destinations in a real headless browser over the real stack (Kafka, the
 * delivery log, a deliverer, ingest, receivers on 127.0.0.1): a destination created with the form,
 * its secret shown once, a test event, an event through ingest seen in the log, an edit at its
 * version, and a deletion after a confirmation. No secret is on any page but the one after creation.
 */
describe('runtime destinations in the delivery-log console', {
  skip: executablePath ? false : `no ${CHROMIUM} (apt-get install chromium)`,
  timeout: 300_000,
}, () => {
  let pipeline: Pipeline;
  let browser: Browser;
  let page: Page;
  const r = {} as Record<'first' | 'second', Receiver>;
  const id = uniqueName('console-made');
  /** Secrets the form is given: the URL's query token and a header value; neither may be shown. */
  const token = `tok${randomBytes(8).toString('hex')}`;
  const headerValue = `hdr${randomBytes(8).toString('hex')}`;
  let signingSecret = '';
  /** Every change request the console made, with its method and headers. */
  const changes: Request[] = [];

  const idOf = (q: { headers: Record<string, unknown> }) => String(q.headers['x-message-id'] ?? '');
  const url = () => pipeline.service('delivery-log').url;
  /** The page's markup and text, and what the tab stores: none may hold a secret. */
  const assertNoSecret = async (where: string) => {
    const seen = [
      await page.content(),
      await page.locator('body').innerText(),
      page.url(),
      await page.evaluate(() => JSON.stringify({ ...sessionStorage, ...localStorage })),
    ].join('\n');
    for (const secret of [token, headerValue, signingSecret].filter(Boolean))
      assert.ok(!seen.includes(secret), `${where} shows no secret`);
  };

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    r.first = await startReceiver({ behaviour: () => ({ status: 200, body: 'first received' }) });
    r.second = await startReceiver({ behaviour: () => ({ status: 200, body: 'second received' }) });
    pipeline = await Pipeline.start({
      endpoints: [() => ({ status: 200, body: 'ok' })],
      services: ['delivery-log', 'deliverer', 'ingest'],
      partitions: 2,
      env: { [KEY_VARIABLE]: randomBytes(32).toString('hex') },
      config: { runtimeDestinations: { keyring: [{ id: 'k1', key: { env: KEY_VARIABLE } }] } },
    });
    browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
    const context = await browser.newContext({
      viewport: { width: 1366, height: 800 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    page = await context.newPage();
    page.on('request', (q) => {
      if (q.url().includes(DEFINITIONS) && q.method() !== 'GET') changes.push(q);
    });
  });
  after(async () => {
    await browser?.close();
    await pipeline?.close();
    await Promise.all(Object.values(r).map((x) => x.close()));
  });

  it('creates one with the form, shows its secret once, tests it and shows its attempts', async () => {
    await page.goto(`${url()}/#/`);
    await page.getByLabel('Admin token').fill(DELIVERY_LOG_TOKEN);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Destinations' }).waitFor();
    // The config file's destination says so, and offers no edit or delete.
    await page.getByText('From the config file').waitFor();
    assert.equal(await page.getByRole('link', { name: 'Edit ledger-hooks' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Delete ledger-hooks' }).count(), 0);

    await page.getByRole('link', { name: 'New destination' }).click();
    await page.getByRole('heading', { name: 'New destination' }).waitFor();
    await page.getByRole('textbox', { name: /^Id/ }).fill(id);
    await page.getByLabel('Name (optional)').fill('Made in the console');
    await page.getByRole('checkbox', { name: /ledger/ }).check();
    // Five endpoints at most: the button stops offering more.
    const add = page.getByRole('button', { name: 'Add endpoint' });
    for (let i = 0; i < 4; i++) await add.click();
    assert.equal(await add.isDisabled(), true, 'no sixth endpoint');
    for (let n = 5; n > 1; n--) await page.getByRole('button', { name: `Remove endpoint ${n}` }).click();
    const firstUrl = `${r.first.url}?key=${token}`;
    await page.getByLabel('URL of endpoint 1').fill(firstUrl);
    await page.getByLabel('Headers of endpoint 1').fill(`X-Team-Token: ${headerValue}`);
    await page.getByLabel('Filter (JSON, optional)').fill('{"types": ["track"]}');
    assert.equal(await page.getByRole('checkbox', { name: 'Enabled' }).isChecked(), true);
    await page.screenshot({ path: `${ARTIFACTS}destination-new.png`, fullPage: true });
    await page.getByRole('button', { name: 'Create destination' }).click();

    await page.getByRole('heading', { name: `Destination ${id} created` }).waitFor();
    signingSecret = await page.locator('code.secret-value').innerText();
    assert.match(signingSecret, /^[0-9a-f]{64}$/, 'the generated X-Signature secret');
    await page.getByRole('button', { name: 'Copy the X-Signature secret' }).click();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), signingSecret, 'copied');
    await page.screenshot({ path: `${ARTIFACTS}destination-created.png`, fullPage: true });
    const create = changes.find((q) => q.method() === 'POST' && q.url().endsWith(DEFINITIONS))!;
    assert.deepEqual(create.postDataJSON(), {
      id,
      name: 'Made in the console',
      type: 'webhooks',
      enabled: true,
      sourceIds: ['ledger'],
      settings: { webhooks: [{ url: firstUrl, headers: { 'X-Team-Token': headerValue } }] },
      filter: { types: ['track'] },
    });
    assert.ok(!page.url().includes(signingSecret) && !(await page.evaluate(() => sessionStorage.length > 1)));

    await page.getByRole('link', { name: 'Back to Destinations' }).click();
    const ref = redactUrl(firstUrl);
    await page.getByRole('heading', { name: `Made in the console (${id})` }).waitFor();
    await page.getByText(/Runtime destination, version 1, changed .* by admin/).waitFor();
    await assertNoSecret('the Destinations page after the creation');

    // The test event: the answer in the row, the request signed with the secret shown, with the header given.
    await page.getByRole('button', { name: `Send a test event to ${ref}` }).click();
    const row = page.locator('tr', { has: page.getByRole('cell', { name: ref, exact: true }) });
    await waitUntil(
      async () => /HTTP 200 in \d+ ms/.test(await row.locator('.test-result').innerText()),
      10_000,
      'the row shows the test answer',
    );
    assert.match(await row.locator('.test-result').innerText(), /first received/);
    const tested = r.first.requests.at(-1)!;
    assert.match(idOf(tested), /^sluice-test-/);
    assert.equal(tested.headers['x-team-token'], headerValue);
    assert.ok(verifySignature(signingSecret, tested.body, String(tested.headers['x-signature'])), 'signed');
    await page.screenshot({ path: `${ARTIFACTS}destination-runtime-tested.png`, fullPage: true });

    // Events through ingest: the track call reaches the endpoint, the page call is filtered out.
    const tracked = pipeline.nextMessageId();
    const paged = pipeline.nextMessageId();
    const sent = await pipeline.postBatch([
      { type: 'track', messageId: tracked, userId: 'u-1', event: 'Console Made' },
      { type: 'page', messageId: paged, userId: 'u-1', name: 'Home' },
    ]);
    assert.equal(sent.status, 200);
    const stateOf = async (messageId: string) =>
      (await pipeline.deliveryLog(`/api/v1/messages/ledger/${messageId}`)).body.deliveries?.find(
        (d: { destinationId: string }) => d.destinationId === id,
      )?.state;
    await waitUntil(async () => (await stateOf(tracked)) === 'delivered', DELIVERED_WITHIN_MS, 'delivered');
    await waitUntil(async () => (await stateOf(paged)) === 'filtered', DELIVERED_WITHIN_MS, 'filtered');
    const delivered = r.first.requests.find((q) => idOf(q) === tracked)!;
    assert.ok(verifySignature(signingSecret, delivered.body, String(delivered.headers['x-signature'])));
    assert.ok(!r.first.requests.some((q) => idOf(q) === paged), 'the filtered call never reached the endpoint');

    await page.goto(`${url()}/#/message/ledger/${tracked}`);
    await page.getByRole('heading', { name: `Message ${tracked}` }).waitFor();
    const attempt = page.locator('tr.attempt', { hasText: id });
    assert.match(await attempt.innerText(), new RegExp(`${id}.*\\?\\*\\*\\*.*HTTP 200.*first received`, 's'));
    await page.screenshot({ path: `${ARTIFACTS}destination-runtime-attempt.png`, fullPage: true });
    await assertNoSecret('the message page');
    await page.goto(`${url()}/#/messages?destinationId=${id}`);
    await page.getByRole('link', { name: tracked }).waitFor();
    await page.getByRole('link', { name: paged }).waitFor();
  });

  it('edits it at the version it was read at (If-Match), a stale form refused', async () => {
    await page.goto(`${url()}/#/`);
    await page.getByRole('link', { name: `Edit ${id}` }).click();
    await page.getByRole('heading', { name: `Edit ${id}` }).waitFor();
    // What it starts from: the redacted endpoint and its header's name, the choices made; never a value.
    assert.match(
      await page.getByRole('list', { name: 'Current endpoints' }).innerText(),
      /\?\*\*\*.*headers X-Team-Token/s,
    );
    assert.equal(await page.getByRole('checkbox', { name: /ledger/ }).isChecked(), true);
    assert.match(await page.getByLabel('Filter (JSON, optional)').inputValue(), /"track"/);
    assert.equal(await page.getByLabel('URL of endpoint 1').inputValue(), '');
    await assertNoSecret('the edit form');

    // Someone else changes it meanwhile: the form, read at version 1, is refused with the version now.
    const other = await pipeline.deliveryLog(`${DEFINITIONS}/${id}`, {
      method: 'PATCH',
      body: { name: 'Renamed elsewhere' },
      headers: { 'if-match': '"1"' },
    });
    assert.equal(other.status, 200, JSON.stringify(other.body));
    await page.getByLabel('URL of endpoint 1').fill(r.second.url);
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page
      .getByRole('alert')
      .getByText(/at version 2, not 1/)
      .waitFor();

    // Read again: the second endpoint in place of the first, the header given again, disabled.
    await page.reload();
    await page.getByRole('heading', { name: `Edit ${id}` }).waitFor();
    assert.equal(await page.getByLabel('Name (optional)').inputValue(), 'Renamed elsewhere');
    await page.getByLabel('URL of endpoint 1').fill(r.second.url);
    await page.getByLabel('Headers of endpoint 1').fill(`X-Team-Token: ${headerValue}`);
    await page.getByRole('checkbox', { name: 'Enabled' }).uncheck();
    await page.screenshot({ path: `${ARTIFACTS}destination-edit.png`, fullPage: true });
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').getByText(`Saved ${id}: version 3.`).waitFor();
    await page.getByRole('heading', { name: 'Destinations' }).waitFor();
    await page.getByRole('heading', { name: `Renamed elsewhere (${id}) — disabled` }).waitFor();
    await page.getByRole('cell', { name: r.second.url, exact: true }).waitFor();
    const patches = changes.filter((q) => q.method() === 'PATCH');
    assert.deepEqual(
      patches.map((q) => q.headers()['if-match']),
      ['"1"', '"2"'],
      'each save names the version its form was read at',
    );
    assert.deepEqual(patches[1]!.postDataJSON(), {
      sourceIds: ['ledger'],
      enabled: false,
      filter: { types: ['track'] },
      settings: { webhooks: [{ url: r.second.url, headers: { 'X-Team-Token': headerValue } }] },
    });
    const read = await pipeline.deliveryLog(`${DEFINITIONS}/${id}`);
    assert.equal(read.body.version, 3);
    assert.equal(read.body.definition.enabled, false);
    assert.deepEqual(read.body.definition.settings.webhooks, [
      { url: { redacted: true }, headers: { 'X-Team-Token': { redacted: true } } },
    ]);
    await page.screenshot({ path: `${ARTIFACTS}destination-edited.png`, fullPage: true });
    await assertNoSecret('the Destinations page after the edit');
  });

  it('deletes it after a confirmation, at its version', async () => {
    await page.goto(`${url()}/#/`);
    const heading = page.getByRole('heading', { name: new RegExp(`\\(${id}\\)`) });
    await heading.waitFor();
    await page.getByRole('button', { name: `Delete ${id}` }).click();
    const confirm = page.getByRole('group', { name: `Confirm deleting ${id}` });
    await confirm.waitFor();
    await page.screenshot({ path: `${ARTIFACTS}destination-delete-confirm.png`, fullPage: true });
    // Cancel leaves it in place: nothing is sent.
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await confirm.count(), 0);
    assert.equal(changes.filter((q) => q.method() === 'DELETE').length, 0);
    assert.equal((await pipeline.deliveryLog(`${DEFINITIONS}/${id}`)).status, 200);

    await page.getByRole('button', { name: `Delete ${id}` }).click();
    await page.getByRole('button', { name: `Yes, delete ${id}` }).click();
    await page.getByRole('status').getByText(`Deleted ${id}.`).waitFor();
    await waitUntil(async () => (await heading.count()) === 0, 10_000, 'the destination leaves the page');
    const deletes = changes.filter((q) => q.method() === 'DELETE');
    assert.deepEqual(
      deletes.map((q) => q.headers()['if-match']),
      ['"3"'],
    );
    assert.equal((await pipeline.deliveryLog(`${DEFINITIONS}/${id}`)).status, 404);
    // The config file's destination is still there.
    await page.getByRole('heading', { name: /\(ledger-hooks\)/ }).waitFor();
    await assertNoSecret('the Destinations page after the deletion');
  });
});
