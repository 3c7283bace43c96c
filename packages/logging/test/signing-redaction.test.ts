import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { it } from 'node:test';
import { createLogger } from '@sluice/logging';

it('never writes signing secrets or endpoint credentials of a destination, nor webhook-signature headers', () => {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
  const logger = createLogger({ name: 't', destination: sink });
  const signing = {
    xSignature: true,
    standardWebhooks: true,
    xSignatureKeys: [{ secret: 'hex-secret-1' }, { secret: 'hex-secret-2', notBefore: 1 }],
    standardWebhooksKeys: [{ secret: 'whsec_AAAA1' }, { secret: 'whsec_BBBB2', notAfter: 2 }],
  };
  const endpoints = [{ url: 'https://u:pw-1@h/x?t=tok-1', ref: 'https://***@h/x?***', headers: { 'X-Key': 'key-1' } }];
  logger.info({ config: { destinations: [{ id: 'd-1', signing, endpoints }] } }, 'config');
  logger.info({ destinations: [{ id: 'd-2', signing, endpoints }] }, 'destinations');
  logger.info({ headers: { 'webhook-signature': 'v1,c2lnbmF0dXJl' } }, 'request');
  const out = lines.join('');
  for (const secret of [
    'hex-secret-1',
    'hex-secret-2',
    'whsec_AAAA1',
    'whsec_BBBB2',
    'c2lnbmF0dXJl',
    'pw-1',
    'tok-1',
    'key-1',
  ]) {
    assert.ok(!out.includes(secret), `leaked ${secret}: ${out}`);
  }
  assert.match(out, /"id":"d-1"/);
  assert.match(out, /"notBefore":1/);
});
