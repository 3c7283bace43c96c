import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CodecError, SchemaRegistryUnavailableError } from '@sluice/codec';
import type { EventEnvelope, JsonObject } from '@sluice/envelope';
import { ProducerThreadError, RecordBatcherClosedError } from '@sluice/kafka';
import { testEnvelope } from '@sluice/testkit';
import { WebhookThreadError } from '../src/adapters/webhook-thread.ts';
import { MAX_BODY_DEPTH, nestingExceeds } from '../src/domain/nesting.ts';
import { classifyFailure, failureMessage, MAX_REJECT_MESSAGE_CHARS, REJECT_REASONS } from '../src/domain/poison.ts';
import { encodeBody, renderBody } from '../src/domain/render-body.ts';
import { isInfrastructureFailure } from '../src/infrastructure-errors.ts';

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

const track = (properties: JsonObject) => testEnvelope({ userId: 'u', event: 'Deep', properties });

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
    const identify = testEnvelope({ type: 'identify', userId: 'u', traits: { t: nested(5_000) } });
    assert.equal((renderBody(identify) as { code?: string }).code, 'body_too_deep');
    const withContext: EventEnvelope = { ...track({}), context: { c: nested(5_000) } as unknown as JsonObject };
    assert.equal((renderBody(withContext) as { code?: string }).code, 'body_too_deep');
  });
});

describe('classifyFailure (one record vs. infrastructure)', () => {
  const table: [string, unknown, 'decode' | 'route' | 'render' | 'deliver', string][] = [
    ['a stack overflow while rendering', new RangeError('Maximum call stack size exceeded'), 'render', 'unrenderable'],
    ['a TypeError while delivering', new TypeError('x is not iterable'), 'deliver', 'undeliverable'],
    ['anything thrown while decoding', new Error('boom'), 'decode', 'undecodable'],
    ['a non-Error thrown while routing', 'a string', 'route', 'unroutable'],
    ['a codec error that retrying cannot help', new CodecError('invalid_value', 'bad', false), 'decode', 'undecodable'],
  ];
  for (const [what, err, step, reason] of table) {
    it(`${what} rejects the record as ${reason}`, () => {
      const verdict = classifyFailure(err, step, isInfrastructureFailure);
      assert.equal(verdict.kind, 'reject');
      assert.equal(verdict.kind === 'reject' && verdict.reason, reason);
      assert.ok((REJECT_REASONS as readonly string[]).includes(reason));
    });
  }

  const fatal: [string, unknown][] = [
    ['side records unwritten at shutdown', new RecordBatcherClosedError('closed')],
    ['the producer thread failed', new ProducerThreadError('KafkaJSError', 'broker gone')],
    ['the webhook thread died', new WebhookThreadError('webhook thread exited (code 1)')],
    ['the schema registry stayed unreachable', new SchemaRegistryUnavailableError('no registry')],
  ];
  for (const [what, err] of fatal) {
    it(`${what} is fatal for the consumer, never a rejection`, () => {
      assert.deepEqual(classifyFailure(err, 'deliver', isInfrastructureFailure), { kind: 'fatal' });
    });
  }

  it('keeps the error name and message, cut to a bounded length', () => {
    assert.equal(
      failureMessage(new RangeError('Maximum call stack size exceeded')),
      'RangeError: Maximum call stack size exceeded',
    );
    assert.equal(failureMessage(new Error('x'.repeat(10_000))).length, MAX_REJECT_MESSAGE_CHARS);
    assert.equal(failureMessage(42), 'thrown: 42');
    assert.equal(failureMessage(Object.create(null)), 'thrown: object');
  });
});
