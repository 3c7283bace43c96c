import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normaliseCall, type RequestFacts } from '../src/domain/normalise-call.ts';

const facts = (extra: Partial<RequestFacts> = {}): RequestFacts => ({
  sourceId: 'src-a',
  receivedAt: Date.parse('2026-11-21T23:00:05.000Z'),
  maxCallBytes: 32_000,
  newMessageId: () => 'generated-id',
  ...extra,
});

test('per-call rejections, as a table', () => {
  const table: [unknown, string][] = [
    ['not an object', 'invalid_call'],
    [[1, 2], 'invalid_call'],
    [{ type: 'purchase', userId: 'u' }, 'unknown_type'],
    [{ userId: 'u' }, 'unknown_type'],
    [{ type: 'identify' }, 'missing_identity'],
    [{ type: 'identify', userId: '', anonymousId: null }, 'missing_identity'],
    [{ type: 'track', userId: 'u' }, 'missing_event'],
    [{ type: 'track', userId: 'u', event: '' }, 'missing_event'],
    [{ type: 'group', userId: 'u' }, 'missing_group_id'],
    [{ type: 'alias', userId: 'u' }, 'missing_alias_ids'],
    [{ type: 'alias', previousId: 'p', anonymousId: 'a' }, 'missing_alias_ids'],
    [{ type: 'track', userId: 'u', event: 'E', properties: 'x' }, 'invalid_field'],
    [{ type: 'track', userId: 'u', event: 'E', context: [1] }, 'invalid_field'],
    [{ type: 'track', userId: 'u', event: 'E', properties: { big: 'x'.repeat(32_001) } }, 'call_too_large'],
  ];
  table.forEach(([call, code], index) => {
    const result = normaliseCall(call, index, facts());
    assert.equal(result.ok, false, JSON.stringify(call).slice(0, 80));
    if (!result.ok) {
      assert.equal(result.rejection.code, code, JSON.stringify(call).slice(0, 80));
      assert.equal(result.rejection.index, index);
      assert.ok(result.rejection.message.length > 0);
    }
  });
});

test('accepted calls: every type with its minimum', () => {
  for (const call of [
    { type: 'identify', anonymousId: 'a' },
    { type: 'track', userId: 'u', event: 'E' },
    { type: 'page', userId: 'u' },
    { type: 'screen', userId: 'u', name: 'Home' },
    { type: 'group', userId: 'u', groupId: 'g' },
    { type: 'alias', userId: 'u', previousId: 'p' },
  ]) {
    const result = normaliseCall(call, 0, facts());
    assert.equal(result.ok, true, call.type);
  }
});

test('normalisation: ids, times, merged context and integrations, ip, no writeKey', () => {
  const result = normaliseCall(
    {
      type: 'page',
      userId: 42,
      writeKey: 'secret',
      timestamp: '2026-11-21T23:00:00.000Z',
      context: { library: { name: 'mine' }, ip: '9.9.9.9' },
      integrations: { Webhooks: true },
      properties: { path: '/a', title: 'A' },
      name: 'Home',
      extra: 'kept',
    },
    3,
    facts({
      batchContext: { library: { name: 'batch' }, locale: 'fr' },
      batchIntegrations: { All: false, Webhooks: false },
      batchSentAt: '2026-11-21T23:00:10.000Z',
      ip: '1.2.3.4',
    }),
  );
  assert.ok(result.ok);
  const e = result.envelope;
  assert.equal(e.sourceId, 'src-a');
  assert.equal(e.type, 'page');
  assert.equal(e.userId, '42');
  assert.equal(e.messageId, 'generated-id');
  assert.equal(e.timestamp, '2026-11-21T22:59:55.000Z');
  assert.equal(e.originalTimestamp, '2026-11-21T23:00:00.000Z');
  assert.equal(e.sentAt, '2026-11-21T23:00:10.000Z');
  assert.equal(e.receivedAt, '2026-11-21T23:00:05.000Z');
  assert.deepEqual(e.context, { library: { name: 'mine' }, locale: 'fr', ip: '9.9.9.9' });
  assert.deepEqual(e.integrations, { All: false, Webhooks: true });
  assert.deepEqual(e.properties, { path: '/a', title: 'A' });
  assert.equal(e.name, 'Home');
  assert.equal(e.extra, 'kept');
  assert.equal('writeKey' in e, false);
  assert.equal('anonymousId' in e, false);
});

test('route type wins on single-call routes; context.ip from the request when the call has none', () => {
  const result = normaliseCall(
    { type: 'identify', anonymousId: 'a', messageId: 'm1' },
    0,
    facts({ routeType: 'track', ip: '1.2.3.4' }),
  );
  assert.equal(result.ok, false); // a track without event
  const ok = normaliseCall(
    { anonymousId: 'a', messageId: 'm1', traits: { x: 1 } },
    0,
    facts({ routeType: 'identify', ip: '1.2.3.4' }),
  );
  assert.ok(ok.ok);
  assert.equal(ok.envelope.messageId, 'm1');
  assert.equal(ok.envelope.userId, null);
  assert.equal(ok.envelope.anonymousId, 'a');
  assert.deepEqual(ok.envelope.context, { ip: '1.2.3.4' });
});
