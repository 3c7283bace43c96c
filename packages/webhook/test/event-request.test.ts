import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { DestinationSigning } from '@sluice/config';
import type { EventEnvelope } from '@sluice/envelope';
import { verifySignature, verifyStandardWebhook } from '@sluice/webhook-signature';
import { encodeBody, eventRequest, renderBody } from '../src/index.ts';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const whsec = `whsec_${randomBytes(32).toString('base64')}`;
const signing: DestinationSigning = {
  xSignature: true,
  standardWebhooks: true,
  xSignatureKeys: [{ secret: 'hex-secret' }],
  standardWebhooksKeys: [{ secret: whsec }],
};
const endpoint = { url: 'https://hooks.example/in', headers: { 'x-team': 'growth' } };
const event: EventEnvelope = {
  sourceId: 'web',
  type: 'track',
  messageId: 'm-1',
  timestamp: '2026-03-01T11:59:59.000Z',
  userId: 'u-1',
  event: 'Sluice Test Event',
  properties: { test: true },
};

describe('eventRequest: the request the deliverer makes for one event', () => {
  it('renders the body, signs it with each scheme and sets the fixed headers', () => {
    const made = eventRequest({ destination: { signing }, endpoint, event, nowMs: NOW, batchId: 'b-1' });
    assert.ok(made.ok);
    const rendered = renderBody(event);
    assert.ok(rendered.ok);
    assert.ok(made.body.equals(encodeBody(rendered.body)), 'the bytes the deliverer sends');
    assert.equal(made.batchId, undefined);
    assert.equal(made.headers['x-team'], 'growth');
    assert.equal(made.headers['x-message-id'], 'm-1');
    assert.ok(verifySignature('hex-secret', made.body, made.headers['x-signature']!));
    const verdict = verifyStandardWebhook({
      secrets: [whsec],
      id: made.headers['webhook-id']!,
      timestamp: made.headers['webhook-timestamp']!,
      signature: made.headers['webhook-signature']!,
      body: made.body,
      nowMs: NOW,
      toleranceSeconds: 300,
    });
    assert.ok(verdict.ok, JSON.stringify(verdict));
  });

  it('sends a batching destination a batch of one, signed over the batch', () => {
    const batch = { maxEvents: 10, maxBytes: 1_048_576, maxWaitMs: 50 };
    const made = eventRequest({ destination: { signing, batch }, endpoint, event, nowMs: NOW, batchId: 'b-1' });
    assert.ok(made.ok);
    assert.equal(made.batchId, 'b-1');
    const document = JSON.parse(made.body.toString());
    assert.deepEqual([document.batchId, document.messageIds, document.events.length], ['b-1', ['m-1'], 1]);
    assert.deepEqual([made.headers['x-batch-id'], made.headers['x-batch-size']], ['b-1', '1']);
    assert.equal(made.headers['x-message-id'], undefined);
    assert.ok(verifySignature('hex-secret', made.body, made.headers['x-signature']!));
    assert.equal(made.headers['webhook-id'], 'b-1');
  });

  it('answers an event without a body with the reason', () => {
    const made = eventRequest({
      destination: { signing },
      endpoint,
      event: { ...event, timestamp: 'yesterday' },
      nowMs: NOW,
      batchId: 'b-1',
    });
    assert.deepEqual(made.ok ? undefined : made.code, 'invalid_timestamp');
  });
});
