import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EventEnvelope } from '@sluice/envelope';
import { loadVector } from '@sluice/testkit';
import { signBody } from '@sluice/webhook-signature';
import { encodeBody, renderBody, toIsoMillis } from '../src/render-body.ts';

interface PayloadCase {
  name: string;
  envelope: EventEnvelope;
  body: Record<string, unknown>;
}

const vectors = loadVector<{ cases: PayloadCase[] }>('payloads.json');

describe('renderBody (docs/reference/delivery.md golden vectors)', () => {
  it('covers all seven body shapes', () => {
    assert.deepEqual(
      new Set(vectors.cases.map((c) => c.envelope.type)),
      new Set(['page', 'screen', 'identify', 'track', 'alias', 'group', 'delete']),
    );
  });
  for (const c of vectors.cases) {
    it(`renders ${c.name} exactly`, () => {
      const rendered = renderBody(c.envelope);
      assert.ok(rendered.ok);
      assert.deepEqual(JSON.parse(encodeBody(rendered.body).toString('utf8')), c.body);
    });
  }

  it('delete has exactly three keys even when the envelope carries more', () => {
    const rendered = renderBody({
      sourceId: 's',
      type: 'delete',
      messageId: 'd-1',
      userId: 'u',
      timestamp: '2026-01-02T03:04:05Z',
      context: { x: 1 },
      anonymousId: 'a',
    });
    assert.ok(rendered.ok);
    assert.deepEqual(Object.keys(rendered.body).sort(), ['timestamp', 'type', 'userId']);
    assert.equal(rendered.body.timestamp, '2026-01-02T03:04:05.000Z');
  });

  it('normalises the timestamp to UTC with milliseconds and Z', () => {
    assert.equal(toIsoMillis('2026-11-21T23:34:15+02:00'), '2026-11-21T21:34:15.000Z');
    assert.equal(toIsoMillis('2026-11-21T23:34:15.123456Z'), '2026-11-21T23:34:15.123Z');
    assert.equal(toIsoMillis('not a date'), undefined);
  });

  it('keeps a value already in that form, and reads an impossible date as before (Date.parse rolls it over)', () => {
    assert.equal(toIsoMillis('2026-11-21T23:34:15.123Z'), '2026-11-21T23:34:15.123Z');
    assert.equal(toIsoMillis('2026-02-30T10:00:00.000Z'), '2026-03-02T10:00:00.000Z');
  });

  it('reports an unreadable timestamp instead of throwing', () => {
    const rendered = renderBody({
      sourceId: 's',
      type: 'track',
      messageId: 'm',
      userId: 'u',
      event: 'E',
      timestamp: 'yesterday-ish',
    });
    assert.equal(rendered.ok, false);
    assert.equal(!rendered.ok && rendered.code, 'invalid_timestamp');
  });

  it('anonymous calls have userId null', () => {
    const rendered = renderBody({
      sourceId: 's',
      type: 'identify',
      messageId: 'm',
      anonymousId: 'a-1',
      timestamp: '2026-01-01T00:00:00.000Z',
    });
    assert.ok(rendered.ok);
    assert.equal(rendered.body.userId, null);
    assert.equal(rendered.body.anonymousId, 'a-1');
    assert.deepEqual(rendered.body.traits, {});
    assert.deepEqual(rendered.body.context, {});
  });
});

describe('signature vectors', () => {
  const cases = loadVector<{ secret: string; bodyBase64: string; xSignature: string }[]>('signatures.json');
  for (const [i, c] of cases.entries()) {
    it(`signs vector ${i} over the exact bytes`, () => {
      assert.equal(signBody(c.secret, Buffer.from(c.bodyBase64, 'base64')), c.xSignature);
    });
  }
});
