import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeliveryTimeoutError, InvalidEndpointUrlError, SsrfBlockedError } from '@sluice/webhook';
import { answerText, failureText, testAnswer } from '../src/domain/test-answer.ts';
import { parseTestRequest, TEST_EVENT_NAME, testEnvelope } from '../src/domain/test-event.ts';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');

describe('a destination test: its request', () => {
  it('takes nothing, an endpoint index and a call; refuses anything else naming the field', () => {
    assert.deepEqual(parseTestRequest(undefined), { ok: true, value: { endpoint: 0 } });
    assert.deepEqual(parseTestRequest({ endpoint: 2, event: { type: 'identify' } }), {
      ok: true,
      value: { endpoint: 2, event: { type: 'identify' } },
    });
    const field = (body: unknown) => {
      const parsed = parseTestRequest(body);
      return parsed.ok ? undefined : parsed.field;
    };
    assert.equal(field([]), 'body');
    assert.equal(field({ endpoint: -1 }), 'endpoint');
    assert.equal(field({ endpoint: 1.5 }), 'endpoint');
    assert.equal(field({ endpoint: '1' }), 'endpoint');
    assert.equal(field({ event: 'track' }), 'event');
    assert.equal(field({ retries: 3 }), 'retries');
  });

  it('sends the sample track event by default, with the fresh id, the source and the time now', () => {
    const made = testEnvelope({ call: undefined, sourceId: 'web', nowMs: NOW, messageId: 'sluice-test-1' });
    assert.ok(made.ok);
    assert.deepEqual(made.value, {
      sourceId: 'web',
      messageId: 'sluice-test-1',
      timestamp: '2026-03-01T12:00:00.000Z',
      receivedAt: '2026-03-01T12:00:00.000Z',
      type: 'track',
      event: TEST_EVENT_NAME,
      userId: 'sluice-test',
      properties: { test: true },
    });
  });

  it("keeps what a given call sets, and refuses one the deliverer could not send (400 on 'event')", () => {
    const call = { type: 'identify', userId: 'u-9', traits: { plan: 'pro' }, messageId: 'mine' };
    const made = testEnvelope({ call, sourceId: 'web', nowMs: NOW, messageId: 'sluice-test-1' });
    assert.ok(made.ok);
    assert.deepEqual([made.value.type, made.value.messageId, made.value.userId], ['identify', 'mine', 'u-9']);
    for (const bad of [{ type: 'purchase' }, { event: 'no type' }, { type: 'track', messageId: 'a b' }]) {
      const refused = testEnvelope({ call: bad, sourceId: 'web', nowMs: NOW, messageId: 'sluice-test-1' });
      assert.equal(refused.ok ? undefined : refused.field, 'event', JSON.stringify(bad));
    }
  });
});

describe('a destination test: its answer', () => {
  it('shows the first bytes as text with control characters escaped, a character cut at the end left out', () => {
    assert.equal(answerText(Buffer.from('ok\n\x1b[31mred\x7f\u0085\u2028')), 'ok\\x0a\\x1b[31mred\\x7f\\x85\\u2028');
    const cut = Buffer.from('aé').subarray(0, 2);
    assert.equal(answerText(cut), 'a');
    assert.equal(answerText(Buffer.from([0x61, 0xff, 0x62])), 'a\ufffdb');
    assert.equal(answerText(Buffer.alloc(0)), '');
  });

  it('says why no answer came', () => {
    assert.equal(
      failureText(new SsrfBlockedError('10.0.0.1', 'private')),
      'refused by the SSRF policy: 10.0.0.1 is a private address, not in delivery.ssrf.allowCidrs',
    );
    assert.equal(failureText(new DeliveryTimeoutError(250)), 'timed out after 250 ms (delivery.timeout)');
    assert.match(failureText(new InvalidEndpointUrlError('ftp://user:pw@x/')), /not a valid http or https URL/);
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    assert.equal(failureText(refused), 'connect ECONNREFUSED 127.0.0.1:9');
    const tls = Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    assert.equal(failureText(tls), 'DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate');
    assert.equal(failureText(Object.assign(new Error(''), { code: 'ECONNRESET' })), 'ECONNRESET');
  });

  it('is ok for a 2xx only, and carries the error and the batch id when there are some', () => {
    const base = { destinationId: 'crm', endpoint: 0, url: 'https://crm.example/h', messageId: 'm' };
    const sent = { latencyMs: 3.2, body: Buffer.from('fine'), truncated: false };
    assert.deepEqual(testAnswer({ ...base, sent: { ...sent, status: 204 } }), {
      ...base,
      status: 204,
      ok: true,
      latencyMs: 3.2,
      body: 'fine',
      truncated: false,
    });
    assert.equal(testAnswer({ ...base, sent: { ...sent, status: 302 } }).ok, false);
    const failed = testAnswer({ ...base, batchId: 'b', sent: { ...sent, error: new DeliveryTimeoutError(5) } });
    assert.deepEqual([failed.status, failed.ok, failed.batchId], [null, false, 'b']);
    assert.match(failed.error!, /timed out/);
  });
});
