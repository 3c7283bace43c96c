import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '@sluice/config';
import { loadVector } from '@sluice/testkit';
import { signBody } from '@sluice/webhook-signature';
import { checkWebhook, findDemoTarget, formatWebhookLine, startDemoReceiver } from '../src/index.ts';

interface SignatureVector {
  secret: string;
  bodyBase64: string;
  xSignature: string;
}

test('checkWebhook: the signature vectors verify; a changed byte or secret does not', () => {
  for (const v of loadVector<SignatureVector[]>('signatures.json')) {
    const body = Buffer.from(v.bodyBase64, 'base64');
    assert.equal(checkWebhook(body, v.xSignature, v.secret).signature, 'ok');
    assert.equal(checkWebhook(body, v.xSignature, `${v.secret}x`).signature, 'BAD');
    assert.equal(checkWebhook(Buffer.concat([body, Buffer.from(' ')]), v.xSignature, v.secret).signature, 'BAD');
    assert.equal(checkWebhook(body, undefined, v.secret).signature, 'BAD');
    assert.equal(checkWebhook(body, undefined, undefined).signature, 'unsigned');
  }
});

test('formatWebhookLine: type, messageId, verdict, body', () => {
  const body = Buffer.from('{"type":"track","messageId":"m-1","event":"E"}');
  assert.equal(
    formatWebhookLine(checkWebhook(body, signBody('s', body), 's')),
    `webhook track messageId=m-1 signature ok ${body}`,
  );
});

test('receiver: prints one line per POST /webhook and answers 200; other paths 404', async () => {
  const lines: string[] = [];
  const receiver = await startDemoReceiver({ port: 0, secret: 'sec', print: (l) => lines.push(l) });
  try {
    const body = JSON.stringify({ type: 'identify', messageId: 'abc', traits: { a: 1 } });
    const ok = await fetch(receiver.url, { method: 'POST', body, headers: { 'X-Signature': signBody('sec', body) } });
    assert.equal(ok.status, 200);
    const bad = await fetch(receiver.url, {
      method: 'POST',
      body,
      headers: { 'X-Signature': signBody('other', body) },
    });
    assert.equal(bad.status, 200);
    assert.equal((await fetch(receiver.url.replace('/webhook', '/nope'), { method: 'POST', body })).status, 404);
    assert.deepEqual(lines, [
      `webhook identify messageId=abc signature ok ${body}`,
      `webhook identify messageId=abc signature BAD ${body}`,
    ]);
  } finally {
    await receiver.close();
  }
});

test('findDemoTarget: first http endpoint of the first enabled destination, with its secret', () => {
  const config = parseConfig({
    sources: [{ id: 's', writeKeys: ['k'] }],
    destinations: [
      {
        id: 'off',
        type: 'webhooks',
        enabled: false,
        sourceIds: ['s'],
        settings: { webhookUrl: 'http://127.0.0.1:1/x' },
      },
      {
        id: 'on',
        type: 'webhooks',
        sourceIds: ['s'],
        settings: { webhooks: [{ url: 'http://demo-receiver:9099/webhook' }], sharedSecret: 'z' },
      },
    ],
  });
  assert.deepEqual(findDemoTarget(config), {
    url: 'http://demo-receiver:9099/webhook',
    hostname: 'demo-receiver',
    port: 9099,
    path: '/webhook',
    secret: 'z',
    loopback: false,
  });
  assert.equal(findDemoTarget(parseConfig({})), undefined);
});
