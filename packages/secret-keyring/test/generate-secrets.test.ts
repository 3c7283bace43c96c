import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateDestination } from '@sluice/config';
import { createHash } from 'node:crypto';
import {
  generateSharedSecret,
  generateWebhookSecret,
  generateWriteKey,
  generateWriteKeyId,
  writeKeyDigest,
} from '@sluice/secret-keyring';
import { webhookSecretKey } from '@sluice/webhook-signature';
import { Webhook } from 'standardwebhooks';

const destination = (signing: Record<string, unknown>, sharedSecret?: string) => ({
  id: 'd',
  type: 'webhooks',
  settings: { webhookUrl: 'https://x.example/', signing, ...(sharedSecret !== undefined && { sharedSecret }) },
});

describe('keyring: generated signing secrets', () => {
  it('a webhook secret is whsec_ and the base64 of 32 random bytes, new each time', () => {
    const secret = generateWebhookSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(webhookSecretKey(secret).length, 32);
    assert.notEqual(generateWebhookSecret(), secret);
  });

  it('the config accepts it as a Standard Webhooks secret, and an X-Signature one as a shared secret', () => {
    const secret = generateWebhookSecret();
    const signing = { schemes: ['x-signature', 'standard-webhooks'], standardWebhooks: { secrets: [{ secret }] } };
    const { destination: resolved } = validateDestination(destination(signing, generateSharedSecret()));
    assert.equal(resolved.signing.standardWebhooksKeys[0]!.secret, secret);
    assert.match(resolved.signing.xSignatureKeys[0]!.secret, /^[0-9a-f]{64}$/);
  });

  it('the Standard Webhooks reference library signs and verifies with it', () => {
    const secret = generateWebhookSecret();
    const body = '{"type":"track","event":"Order Completed"}';
    // One timestamp for the signature and its header (two clock readings can fall in two seconds).
    const at = new Date(Math.floor(Date.now() / 1_000) * 1_000);
    const signature = new Webhook(secret).sign('msg-1', at, body);
    const headers = {
      'webhook-id': 'msg-1',
      'webhook-timestamp': String(at.getTime() / 1_000),
      'webhook-signature': signature,
    };
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    assert.throws(() => new Webhook(generateWebhookSecret()).verify(body, headers), /No matching signature/);
  });
});

describe('keyring: minted write keys', () => {
  it('a write key is sk_ and the base64url of 32 random bytes; its id wk_ and 12 hex characters; new each time', () => {
    const key = generateWriteKey();
    assert.match(key, /^sk_[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(key.slice(3), 'base64url').length, 32);
    assert.notEqual(generateWriteKey(), key);
    assert.match(generateWriteKeyId(), /^wk_[0-9a-f]{12}$/);
    assert.notEqual(generateWriteKeyId(), generateWriteKeyId());
  });

  it('what is kept of a key is its SHA-256 as 64 hex characters', () => {
    const key = generateWriteKey();
    assert.equal(writeKeyDigest(key), createHash('sha256').update(key, 'utf8').digest('hex'));
    assert.equal(writeKeyDigest('wk-é'), createHash('sha256').update('wk-é', 'utf8').digest('hex'));
  });
});
