import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import {
  signStandardWebhook,
  verifyStandardWebhook,
  WebhookSecretError,
  webhookSecretKey,
  type StandardWebhookCheck,
  type StandardWebhookFailure,
} from '@sluice/webhook-signature';

const secretOf = (bytes: number) => `whsec_${randomBytes(bytes).toString('base64')}`;
const SECRET = secretOf(32);
const BODY = Buffer.from('{"type":"track","event":"Ünïcode ✓","userId":"u-1"}');

describe('Standard Webhooks signing against the reference implementation (npm standardwebhooks)', () => {
  it('the reference library verifies a signature made here, over the exact body bytes', () => {
    const ts = Math.floor(Date.now() / 1_000);
    const signature = signStandardWebhook(webhookSecretKey(SECRET), 'msg-1', ts, BODY);
    const headers = { 'webhook-id': 'msg-1', 'webhook-timestamp': String(ts), 'webhook-signature': signature };
    assert.doesNotThrow(() => new Webhook(SECRET).verify(BODY.toString('utf8'), headers));
    assert.throws(() => new Webhook(secretOf(32)).verify(BODY.toString('utf8'), headers), /No matching signature/);
    assert.throws(() => new Webhook(SECRET).verify(`${BODY.toString('utf8')} `, headers), /No matching signature/);
  });

  it('a signature made by the reference library verifies here', () => {
    const at = new Date();
    const signature = new Webhook(SECRET).sign('msg-2', at, BODY.toString('utf8'));
    const check: StandardWebhookCheck = {
      secrets: [SECRET],
      id: 'msg-2',
      timestamp: String(Math.floor(at.getTime() / 1_000)),
      signature,
      body: BODY,
      nowMs: at.getTime(),
      toleranceSeconds: 300,
    };
    assert.deepEqual(verifyStandardWebhook(check), { ok: true });
    assert.deepEqual(verifyStandardWebhook({ ...check, id: 'msg-3' }), { ok: false, reason: 'no_matching_signature' });
  });
});

describe('verifyStandardWebhook', () => {
  const nowMs = Date.UTC(2026, 10, 23, 18, 0, 0);
  const ts = Math.floor(nowMs / 1_000);
  const sig = (secret: string, at = ts) => signStandardWebhook(webhookSecretKey(secret), 'm', at, BODY);
  const base: StandardWebhookCheck = {
    secrets: [SECRET],
    id: 'm',
    timestamp: String(ts),
    signature: sig(SECRET),
    body: BODY,
    nowMs,
    toleranceSeconds: 300,
  };
  const at = (seconds: number) => ({ timestamp: String(seconds), signature: sig(SECRET, seconds) });
  const fails = (reason: StandardWebhookFailure) => ({ ok: false as const, reason });
  const cases: [string, Partial<StandardWebhookCheck>, ReturnType<typeof verifyStandardWebhook>][] = [
    ['a matching signature', {}, { ok: true }],
    ['one of several signatures (rotation)', { signature: `${sig(secretOf(24))} ${sig(SECRET)}` }, { ok: true }],
    ['one of several trusted secrets', { secrets: [secretOf(24), SECRET] }, { ok: true }],
    ['entries of other versions ignored', { signature: `v1a,${sig(SECRET).slice(3)}` }, fails('no_matching_signature')],
    ['timestamp at the edge of the window', at(ts - 300), { ok: true }],
    ['timestamp one second too old', at(ts - 301), fails('too_old')],
    ['timestamp one second too new', at(ts + 301), fails('too_new')],
    ['a timestamp that is not whole seconds', { timestamp: `${ts}.5` }, fails('bad_timestamp')],
    ['a timestamp changed after signing', { timestamp: String(ts + 1) }, fails('no_matching_signature')],
    ['no signature header', { signature: undefined }, fails('missing_headers')],
    ['no id header', { id: '' }, fails('missing_headers')],
  ];
  for (const [name, change, verdict] of cases) {
    it(name, () => assert.deepEqual(verifyStandardWebhook({ ...base, ...change }), verdict));
  }
});

describe('webhookSecretKey: whsec_ secrets of the specification', () => {
  it('decodes the prefix-stripped base64 to the key bytes', () => {
    const key = randomBytes(24);
    assert.deepEqual(webhookSecretKey(`whsec_${key.toString('base64')}`), key);
  });
  // The part of each secret an error message must not contain.
  const bad: [string, string, RegExp][] = [
    ['no prefix', randomBytes(32).toString('base64'), /must start with whsec_/],
    ['nothing after the prefix', 'whsec_', /standard base64/],
    ['base64url alphabet', `whsec_${'-_'.repeat(16)}`, /standard base64/],
    ['missing padding', `whsec_${randomBytes(25).toString('base64').replace(/=+$/, '')}`, /standard base64/],
    ['23 bytes', secretOf(23), /24 to 64 random bytes, got 23/],
    ['65 bytes', secretOf(65), /24 to 64 random bytes, got 65/],
  ];
  for (const [name, secret, message] of bad) {
    it(`refuses ${name}, without echoing the secret`, () => {
      assert.throws(
        () => webhookSecretKey(secret),
        (err: unknown) =>
          err instanceof WebhookSecretError &&
          message.test(err.message) &&
          !err.message.includes(secret.slice(6) || 'x'.repeat(99)),
      );
    });
  }
});
