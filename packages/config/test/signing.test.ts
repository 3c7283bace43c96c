import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig } from '@sluice/config';

const WHSEC = `whsec_${randomBytes(32).toString('base64')}`;
const config = (settings: Record<string, unknown>) => ({
  sources: [{ id: 's', writeKeys: ['k'] }],
  destinations: [
    { id: 'd', type: 'webhooks', sourceIds: ['s'], settings: { webhookUrl: 'https://x.example/', ...settings } },
  ],
});
const signing = (settings: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) =>
  parseConfig(config(settings), env).destinations[0]!.signing;

describe('config: destination signing', () => {
  it('defaults to X-Signature alone, keyed by sharedSecret, byte-for-byte as before', () => {
    assert.deepEqual(signing({ sharedSecret: 's3cret' }), {
      xSignature: true,
      standardWebhooks: false,
      xSignatureKeys: [{ secret: 's3cret' }],
      standardWebhooksKeys: [],
    });
    assert.deepEqual(signing({}).xSignatureKeys, [], 'no secret, no X-Signature key');
  });

  it('resolves both schemes with rotation windows in milliseconds and { env } secrets', () => {
    const s = signing(
      {
        sharedSecret: 'old-hex-secret',
        signing: {
          schemes: ['x-signature', 'standard-webhooks'],
          xSignature: { secrets: [{ secret: 'new-hex-secret', notBefore: '2026-01-31T00:00:00Z' }] },
          standardWebhooks: {
            secrets: [
              { secret: { env: 'OLD_WHSEC' }, notAfter: '2026-02-01T00:00:00+01:00' },
              { secret: WHSEC, notBefore: '2026-01-31T00:00:00.000Z' },
            ],
          },
        },
      },
      { OLD_WHSEC: WHSEC },
    );
    assert.equal(s.xSignature && s.standardWebhooks, true);
    assert.deepEqual(s.xSignatureKeys, [
      { secret: 'old-hex-secret' },
      { secret: 'new-hex-secret', notBefore: Date.UTC(2026, 0, 31) },
    ]);
    assert.deepEqual(s.standardWebhooksKeys, [
      { secret: WHSEC, notAfter: Date.UTC(2026, 0, 31, 23) },
      { secret: WHSEC, notBefore: Date.UTC(2026, 0, 31) },
    ]);
  });

  it('Standard Webhooks alone sends no X-Signature', () => {
    const s = signing({
      signing: { schemes: ['standard-webhooks'], standardWebhooks: { secrets: [{ secret: WHSEC }] } },
    });
    assert.equal(s.xSignature, false);
    assert.equal(s.standardWebhooks, true);
  });

  const sw = (secret: unknown, extra: Record<string, unknown> = {}) => ({
    signing: { schemes: ['standard-webhooks'], standardWebhooks: { secrets: [{ secret, ...extra }] } },
  });
  const base = 'destinations[0].settings';
  const sw0 = (key: string) => `${base}.signing.standardWebhooks.secrets[0].${key}`;
  const short = `whsec_${randomBytes(16).toString('base64')}`;
  const errors: [string, Record<string, unknown>, string, RegExp][] = [
    ['a whsec_ secret that is not base64', sw('whsec_not*base64'), sw0('secret'), /standard base64/],
    ['a secret without the whsec_ prefix', sw(randomBytes(32).toString('base64')), sw0('secret'), /whsec_/],
    ['a whsec_ secret too short', sw(short), sw0('secret'), /24 to 64/],
    ['a time without a zone', sw(WHSEC, { notAfter: '2026-01-31T00:00:00' }), sw0('notAfter'), /RFC 3339/],
    ['a date that is not a date', sw(WHSEC, { notBefore: '2026-02-31T00:00:00Z' }), sw0('notBefore'), /RFC 3339/],
    [
      'notAfter before notBefore',
      sw(WHSEC, { notBefore: '2026-02-01T00:00:00Z', notAfter: '2026-01-01T00:00:00Z' }),
      sw0('notAfter'),
      /later than notBefore/,
    ],
    [
      'standard-webhooks without secrets',
      { signing: { schemes: ['standard-webhooks'] } },
      `${base}.signing.standardWebhooks.secrets`,
      /is required/,
    ],
    [
      'secrets of a scheme not chosen',
      { signing: { standardWebhooks: { secrets: [{ secret: WHSEC }] } } },
      `${base}.signing.standardWebhooks`,
      /does not include standard-webhooks/,
    ],
    ['sharedSecret without x-signature', { sharedSecret: 'x', ...sw(WHSEC) }, `${base}.sharedSecret`, /x-signature/],
    ['an unknown scheme', { signing: { schemes: ['ed25519'] } }, `${base}.signing.schemes[0]`, /./],
    ['a scheme listed twice', { signing: { schemes: ['x-signature', 'x-signature'] } }, `${base}.signing.schemes`, /./],
    [
      'an empty secret list',
      { signing: { schemes: ['standard-webhooks'], standardWebhooks: { secrets: [] } } },
      `${base}.signing.standardWebhooks.secrets`,
      /fewer than 1/,
    ],
    ['a missing env secret', sw({ env: 'NOT_SET_ANYWHERE' }), sw0('secret'), /NOT_SET_ANYWHERE is not set/],
  ];
  for (const [name, settings, field, problem] of errors) {
    it(`refuses ${name}, naming ${field}`, () => {
      assert.throws(
        () => parseConfig(config(settings), {}),
        (err: unknown) => err instanceof ConfigError && err.field === field && problem.test(err.problem),
      );
    });
  }

  it('reserves the Standard Webhooks header names on endpoints', () => {
    for (const name of ['webhook-id', 'Webhook-Timestamp', 'webhook-signature']) {
      const webhooks = [{ url: 'https://y.example/', headers: { [name]: 'v' } }];
      const input = config({ webhookUrl: undefined, webhooks });
      const field = `${base}.webhooks[0].headers.${name}`;
      assert.throws(
        () => parseConfig(input, {}),
        (err: unknown) => err instanceof ConfigError && err.field === field,
      );
    }
  });
});
