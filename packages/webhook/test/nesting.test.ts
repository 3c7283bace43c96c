import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EventEnvelope, JsonObject } from '@sluice/envelope';
import { MAX_BODY_DEPTH, nestingExceeds } from '../src/nesting.ts';
import { encodeBody, renderBody } from '../src/render-body.ts';

/** `[[[ … ]]]`, `depth` arrays deep, built without recursion (as JSON.parse would hand it over). */
function nested(depth: number): unknown[] {
  const root: unknown[] = [];
  let node = root;
  for (let i = 1; i < depth; i++) {
    const child: unknown[] = [];
    node.push(child);
    node = child;
  }
  return root;
}

const track = (properties: JsonObject): EventEnvelope => ({
  sourceId: 's',
  type: 'track',
  messageId: 'm-1',
  userId: 'u',
  event: 'Deep',
  properties,
  timestamp: '2026-11-21T10:00:00.000Z',
});

describe('nestingExceeds', () => {
  it('measures arrays and objects, the outermost value being level 1', () => {
    assert.equal(nestingExceeds({ a: { b: [1, { c: 'x' }] } }, 4), false);
    assert.equal(nestingExceeds({ a: { b: [1, { c: { d: 1 } }] } }, 4), true);
    assert.equal(nestingExceeds([[[]]], 3), false);
    assert.equal(nestingExceeds([[[[]]]], 3), true);
    assert.equal(nestingExceeds('scalar', 0), false);
    assert.equal(nestingExceeds(null, 0), false);
  });

  it('finds the deep branch among many shallow ones', () => {
    const wide: Record<string, unknown> = {};
    for (let i = 0; i < 1_000; i++) wide[`k${i}`] = { v: i };
    wide.deep = nested(20);
    assert.equal(nestingExceeds(wide, 21), false);
    assert.equal(nestingExceeds(wide, 20), true);
  });

  it('handles 1,000,000 levels without recursion, and in bounded time', () => {
    const value = nested(1_000_000);
    const started = performance.now();
    assert.equal(nestingExceeds(value, MAX_BODY_DEPTH), true);
    assert.equal(nestingExceeds(value, 2_000_000), false);
    assert.ok(performance.now() - started < 5_000);
  });
});

describe('renderBody at any depth', () => {
  it('rejects a track call whose properties nest 10,000 arrays deep (body_too_deep) instead of overflowing the stack', () => {
    // The body is level 1, properties level 2: this is what JSON.stringify could not encode.
    assert.throws(() => JSON.stringify(nested(10_000)), RangeError);
    const rendered = renderBody(track({ deep: nested(10_000) }));
    assert.equal(rendered.ok, false);
    assert.equal(!rendered.ok && rendered.code, 'body_too_deep');
  });

  it('renders and encodes a body exactly at the limit, and rejects one level more', () => {
    // body (1) → properties (2) → deep: levels 3 … MAX_BODY_DEPTH
    const atLimit = renderBody(track({ deep: nested(MAX_BODY_DEPTH - 2) }));
    assert.ok(atLimit.ok);
    const bytes = encodeBody(atLimit.body);
    assert.equal(JSON.parse(bytes.toString('utf8')).properties.deep.length, 1);
    const over = renderBody(track({ deep: nested(MAX_BODY_DEPTH - 1) }));
    assert.equal(!over.ok && over.code, 'body_too_deep');
  });

  it('counts depth in context and traits as well', () => {
    const identify: EventEnvelope = {
      sourceId: 's',
      type: 'identify',
      messageId: 'm',
      userId: 'u',
      traits: { t: nested(5_000) },
      timestamp: '2026-11-21T10:00:00.000Z',
    };
    assert.equal((renderBody(identify) as { code?: string }).code, 'body_too_deep');
    const withContext: EventEnvelope = { ...track({}), context: { c: nested(5_000) } as unknown as JsonObject };
    assert.equal((renderBody(withContext) as { code?: string }).code, 'body_too_deep');
  });
});
