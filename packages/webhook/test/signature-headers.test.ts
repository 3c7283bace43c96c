import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { DestinationSigning } from '@sluice/config';
import { signBody, verifyStandardWebhook, verifySignature } from '@sluice/webhook-signature';
import { signatureHeaders } from '../src/signature-headers.ts';

const whsec = () => `whsec_${randomBytes(32).toString('base64')}`;
const BODY = Buffer.from('{"type":"track","userId":"u-1"}');
const T = Date.UTC(2026, 0, 31, 12);
const HOUR = 3_600_000;
const signing = (extra: Partial<DestinationSigning>): DestinationSigning => ({
  xSignature: true,
  standardWebhooks: false,
  xSignatureKeys: [],
  standardWebhooksKeys: [],
  ...extra,
});
const verifies = (secret: string, headers: Record<string, string>, nowMs: number) =>
  verifyStandardWebhook({
    secrets: [secret],
    id: headers['webhook-id'],
    timestamp: headers['webhook-timestamp'],
    signature: headers['webhook-signature'],
    body: BODY,
    nowMs,
    toleranceSeconds: 300,
  }).ok;

describe('signatureHeaders (injected clock)', () => {
  it('X-Signature alone: the contract header, unchanged; nothing without a secret', () => {
    assert.deepEqual(signatureHeaders(signing({ xSignatureKeys: [{ secret: 's3cret' }] }), 'm-1', BODY, T), {
      'x-signature': signBody('s3cret', BODY),
    });
    assert.equal(signatureHeaders(signing({}), 'm-1', BODY, T), undefined);
  });

  it('Standard Webhooks: webhook-id is the message id, the timestamp is the clock in seconds', () => {
    const secret = whsec();
    const s = signing({ xSignature: false, standardWebhooks: true, standardWebhooksKeys: [{ secret }] });
    const h = signatureHeaders(s, 'm-2', BODY, T + 999)!;
    assert.deepEqual(Object.keys(h).sort(), ['webhook-id', 'webhook-signature', 'webhook-timestamp']);
    assert.equal(h['webhook-id'], 'm-2');
    assert.equal(h['webhook-timestamp'], String(T / 1_000));
    assert.match(h['webhook-signature']!, /^v1,[A-Za-z0-9+/]{43}=$/);
    assert.ok(verifies(secret, h, T));
  });

  it('a later attempt is signed again with its own timestamp over the same bytes', () => {
    const secret = whsec();
    const s = signing({
      standardWebhooks: true,
      xSignatureKeys: [{ secret: 'hex' }],
      standardWebhooksKeys: [{ secret }],
    });
    const first = signatureHeaders(s, 'm-3', BODY, T)!;
    const retry = signatureHeaders(s, 'm-3', BODY, T + 10 * 60_000)!;
    assert.equal(Number(retry['webhook-timestamp']) - Number(first['webhook-timestamp']), 600);
    assert.notEqual(retry['webhook-signature'], first['webhook-signature']);
    assert.equal(retry['x-signature'], first['x-signature']);
    assert.ok(verifies(secret, retry, T + 10 * 60_000));
    assert.ok(!verifies(secret, first, T + 10 * 60_000), 'the first attempt is outside the tolerance by then');
  });

  it('rotation: old and new secrets both sign during the overlap, only the new after notAfter', () => {
    const [old, next] = [whsec(), whsec()];
    const s = signing({
      xSignature: false,
      standardWebhooks: true,
      standardWebhooksKeys: [
        { secret: old, notAfter: T },
        { secret: next, notBefore: T - HOUR },
      ],
    });
    const before = signatureHeaders(s, 'm-4', BODY, T - 2 * HOUR)!;
    assert.equal(before['webhook-signature']!.split(' ').length, 1);
    assert.ok(verifies(old, before, T - 2 * HOUR) && !verifies(next, before, T - 2 * HOUR));
    const overlap = signatureHeaders(s, 'm-4', BODY, T - 1)!;
    assert.equal(overlap['webhook-signature']!.split(' ').length, 2);
    assert.ok(verifies(old, overlap, T - 1) && verifies(next, overlap, T - 1));
    const after = signatureHeaders(s, 'm-4', BODY, T)!;
    assert.equal(after['webhook-signature']!.split(' ').length, 1);
    assert.ok(!verifies(old, after, T) && verifies(next, after, T));
    const allExpired = { ...s, standardWebhooksKeys: [{ secret: old, notAfter: T }] };
    assert.equal(signatureHeaders(allExpired, 'm-4', BODY, T), undefined, 'no active secret, no headers');
  });

  it('rotation of X-Signature: the newest active secret signs the single header', () => {
    const s = signing({ xSignatureKeys: [{ secret: 'old' }, { secret: 'new', notBefore: T }] });
    assert.ok(verifySignature('old', BODY, signatureHeaders(s, 'm-5', BODY, T - 1)!['x-signature']!));
    assert.ok(verifySignature('new', BODY, signatureHeaders(s, 'm-5', BODY, T)!['x-signature']!));
  });
});
