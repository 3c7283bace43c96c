import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SIGNING_SCHEMES } from '@sluice/config';
import { redactUrl } from '@sluice/logging';
import { type ReceivedRequest, type Receiver, startReceiver, uniqueName, waitUntil } from '@sluice/testkit';
import { verifySignature } from '@sluice/webhook-signature';
import { type Browser, chromium, type Page, type Request } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { CHROMIUM, systemChromium } from '../support/chromium.ts';
import { DELIVERY_LOG_TOKEN, Pipeline, runtimeKeyring } from '../support/pipeline.ts';

/** Screenshots of the run (gitignored). */
const ARTIFACTS = fileURLToPath(new URL('../../artifacts/delivery-log-console/', import.meta.url));
const KEY_VARIABLE = 'SLUICE_E2E_CONSOLE_DESTINATIONS_KEY';
const DEFINITIONS = '/api/v1/destination-definitions';
/** Generous waits for what the product does not bound (a first delivery) on a busy machine. */
const DELIVERED_WITHIN_MS = 60_000;

const executablePath = systemChromium();

/** Whether a request's Standard Webhooks signature verifies with `secret` (the `standardwebhooks` library). */
const standardSigned = (secret: string, q: ReceivedRequest) => {
  const headers = Object.fromEntries(
    ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(q.headers[h])]),
  );
  try {
    new Webhook(secret).verify(q.body.toString('utf8'), headers);
    return true;
  } catch {
    return false;
  }
};

/**
 * The console's runtime destinations in a real headless browser over the real stack (Kafka, the
 * delivery log, a deliverer, ingest, receivers on 127.0.0.1): a destination created with the form,
 * its secret shown once, a test event, an event through ingest seen in the log, an edit at its
 * version, its secret rotated, and a deletion after a confirmation; a destination signed with
 * Standard Webhooks created and rotated. No secret is on any page but the one that generated it.
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
  /** Every signing secret the console showed, each on the page that generated it only. */
  const shown: string[] = [];
  /** Every change request the console made, with its method and headers. */
  const changes: Request[] = [];

  const idOf = (q: { headers: Record<string, unknown> }) => String(q.headers['x-message-id'] ?? '');
  const url = () => pipeline.service('delivery-log').url;
  /** The one-time secret on screen, copied with its button: the clipboard holds it. */
  const copySecret = async (scheme: string) => {
    const secret = await page.locator('code.secret-value').innerText();
    await page.getByRole('button', { name: `Copy the ${scheme} secret` }).click();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret, 'copied');
    shown.push(secret);
    return secret;
  };
  /** Sends a test event from the endpoint's row and waits for its answer there; the request the receiver got. */
  const sendTest = async (ref: string, receiver: Receiver) => {
    const count = receiver.requests.length;
    await page.getByRole('button', { name: `Send a test event to ${ref}` }).click();
    const row = page.locator('tr', { has: page.getByRole('cell', { name: ref, exact: true }) });
    await waitUntil(
      async () => /HTTP 200 in \d+ ms/.test(await row.locator('.test-result').innerText()),
      10_000,
      'the row shows the test answer',
    );
    assert.equal(receiver.requests.length, count + 1, 'one request');
    return { row, tested: receiver.requests.at(-1)! };
  };
  /** The page's markup and text, and what the tab stores: none may hold a secret. */
  const assertNoSecret = async (where: string) => {
    const seen = [
      await page.content(),
      await page.locator('body').innerText(),
      page.url(),
      await page.evaluate(() => JSON.stringify({ ...sessionStorage, ...localStorage })),
    ].join('\n');
    for (const secret of [token, headerValue, ...shown]) assert.ok(!seen.includes(secret), `${where} shows no secret`);
  };

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    r.first = await startReceiver({ behaviour: () => ({ status: 200, body: 'first received' }) });
    r.second = await startReceiver({ behaviour: () => ({ status: 200, body: 'second received' }) });
    pipeline = await Pipeline.start({
      endpoints: [() => ({ status: 200, body: 'ok' })],
      services: ['delivery-log', 'deliverer', 'ingest'],
      partitions: 2,
      ...runtimeKeyring(KEY_VARIABLE),
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
    await page.getByLabel('API token').fill(DELIVERY_LOG_TOKEN);
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
    // Exactly the schemes the config's schema accepts, X-Signature (the default) checked.
    const schemes = page.getByRole('group', { name: 'Signing' }).getByRole('checkbox');
    const offered = await Promise.all((await schemes.all()).map((box) => box.getAttribute('value')));
    assert.deepEqual(offered, [...SIGNING_SCHEMES]);
    assert.equal(await page.getByRole('checkbox', { name: /^X-Signature/ }).isChecked(), true);
    assert.equal(await page.getByRole('checkbox', { name: /^Standard Webhooks/ }).isChecked(), false);
    await page.screenshot({ path: `${ARTIFACTS}destination-new.png`, fullPage: true });
    await page.getByRole('button', { name: 'Create destination' }).click();

    await page.getByRole('heading', { name: `Destination ${id} created` }).waitFor();
    signingSecret = await copySecret('X-Signature');
    assert.match(signingSecret, /^[0-9a-f]{64}$/, 'the generated X-Signature secret');
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
    const { row, tested } = await sendTest(ref, r.first);
    assert.match(await row.locator('.test-result').innerText(), /first received/);
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

  it('rotates its secret at its version: the new one shown once, signing at once with no overlap', async () => {
    await page.goto(`${url()}/#/`);
    await page.getByRole('link', { name: `Rotate the signing secret of ${id}` }).click();
    await page.getByRole('heading', { name: `Rotate the signing secret of ${id}` }).waitFor();
    await page.getByText('Scheme: X-Signature').waitFor();
    await page.getByLabel('Old secret keeps signing for (hours)').fill('0');
    await page.screenshot({ path: `${ARTIFACTS}destination-rotate.png`, fullPage: true });
    await page.getByRole('button', { name: 'Rotate secret' }).click();

    await page.getByRole('heading', { name: `New signing secret for ${id}` }).waitFor();
    await page.getByRole('status').getByText(`Rotated the secret of ${id}: version 4.`).waitFor();
    const rotated = await copySecret('X-Signature');
    assert.match(rotated, /^[0-9a-f]{64}$/);
    assert.notEqual(rotated, signingSecret);
    await page.getByText('The old secret no longer signs: the new one signs every webhook from now on.').waitFor();
    await page.screenshot({ path: `${ARTIFACTS}destination-rotated.png`, fullPage: true });
    const rotations = changes.filter((q) => q.url().endsWith(`${DEFINITIONS}/${id}/rotate-secret`));
    assert.deepEqual(
      rotations.map((q) => [q.headers()['if-match'], q.postDataJSON()]),
      [['"3"', { scheme: 'x-signature', overlapMs: 0 }]],
    );

    await page.getByRole('link', { name: 'Back to Destinations' }).click();
    await page.getByRole('heading', { name: 'Destinations' }).waitFor();
    await page.getByText(/Runtime destination, version 4, changed .* by admin/).waitFor();
    await assertNoSecret('the Destinations page after the rotation');
    const { tested } = await sendTest(r.second.url, r.second);
    const signature = String(tested.headers['x-signature']);
    assert.ok(verifySignature(rotated, tested.body, signature), 'signed with the new secret');
    assert.ok(!verifySignature(signingSecret, tested.body, signature), 'no longer with the old one');
  });

  it('creates one signed with Standard Webhooks, and rotates it: old and new sign through the overlap', async () => {
    const swId = uniqueName('console-sw');
    await page.goto(`${url()}/#/destinations/new`);
    await page.getByRole('heading', { name: 'New destination' }).waitFor();
    await page.getByRole('textbox', { name: /^Id/ }).fill(swId);
    await page.getByRole('checkbox', { name: /ledger/ }).check();
    await page.getByLabel('URL of endpoint 1').fill(r.first.url);
    await page.getByRole('checkbox', { name: /^X-Signature/ }).uncheck();
    await page.getByRole('button', { name: 'Create destination' }).click();
    await page.getByRole('alert').getByText('Choose at least one signing scheme').waitFor();
    await page.getByRole('checkbox', { name: /^Standard Webhooks/ }).check();
    await page.getByRole('button', { name: 'Create destination' }).click();
    await page.getByRole('heading', { name: `Destination ${swId} created` }).waitFor();
    const first = await copySecret('Standard Webhooks');
    assert.match(first, /^whsec_/);
    const create = changes.filter((q) => q.method() === 'POST' && q.url().endsWith(DEFINITIONS));
    assert.equal(create.length, 2, 'the form refused no scheme without sending it');
    assert.deepEqual(create[1]!.postDataJSON().settings, {
      webhooks: [{ url: r.first.url }],
      signing: { schemes: ['standard-webhooks'] },
    });
    await page.getByRole('link', { name: 'Back to Destinations' }).click();
    await page.getByRole('heading', { name: new RegExp(`\\(${swId}\\)`) }).waitFor();
    await assertNoSecret('the Destinations page after the Standard Webhooks creation');
    const ref = redactUrl(r.first.url);
    const created = await sendTest(ref, r.first);
    assert.ok(standardSigned(first, created.tested), 'verified by the standardwebhooks library');
    assert.equal(created.tested.headers['x-signature'], undefined, 'only the scheme chosen');

    // Rotated with the default overlap: both secrets sign until it ends.
    await page.getByRole('link', { name: `Rotate the signing secret of ${swId}` }).click();
    await page.getByText('Scheme: Standard Webhooks').waitFor();
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('heading', { name: `New signing secret for ${swId}` }).waitFor();
    const rotated = await copySecret('Standard Webhooks');
    assert.match(rotated, /^whsec_/);
    assert.notEqual(rotated, first);
    await page.getByText(/with the old one too until .* \(24 hours from now\)/).waitFor();
    await page.screenshot({ path: `${ARTIFACTS}destination-rotated-standard-webhooks.png`, fullPage: true });
    const rotation = changes.find((q) => q.url().endsWith(`${DEFINITIONS}/${swId}/rotate-secret`))!;
    assert.equal(rotation.headers()['if-match'], '"1"');
    assert.deepEqual(rotation.postDataJSON(), { scheme: 'standard-webhooks' });

    await page.getByRole('link', { name: 'Back to Destinations' }).click();
    await page.getByText(/Runtime destination, version 2, changed .* by admin/).waitFor();
    await assertNoSecret('the Destinations page after the Standard Webhooks rotation');
    const { tested } = await sendTest(ref, r.first);
    assert.equal(String(tested.headers['webhook-signature']).split(' ').length, 2, 'two signatures');
    assert.ok(standardSigned(rotated, tested), 'verifies with the new secret');
    assert.ok(standardSigned(first, tested), 'and with the old one, within the overlap');
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
      ['"4"'],
    );
    assert.equal((await pipeline.deliveryLog(`${DEFINITIONS}/${id}`)).status, 404);
    // The config file's destination is still there.
    await page.getByRole('heading', { name: /\(ledger-hooks\)/ }).waitFor();
    await assertNoSecret('the Destinations page after the deletion');
  });
});
