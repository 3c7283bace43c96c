import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { JsonObject } from '@sluice/envelope';
import { parseJsonWithText } from '../src/adapters/json.ts';
import { spliceEnvelope } from '../src/domain/envelope-splice.ts';
import { callLayout, locateCalls, memberKey, objectMembers } from '../src/domain/json-members.ts';
import { checkCall, normaliseCall, type RequestFacts } from '../src/domain/normalise-call.ts';
import { jsonText } from '../src/domain/json-text.ts';
import { specialKeyAt } from '../src/domain/special-keys.ts';
import { splitBody } from '../src/domain/request-body.ts';

const facts = (extra: Partial<RequestFacts> = {}): RequestFacts => ({
  sourceId: 'src-a',
  receivedAt: Date.parse('2026-11-21T23:00:05.000Z'),
  ip: '203.0.113.9',
  maxCallBytes: 32_000,
  newMessageId: () => 'generated-id',
  ...extra,
});

/** Same value and key order, whatever the spacing or number spelling of the text. */
const canonical = (value: unknown) => JSON.stringify(typeof value === 'string' ? JSON.parse(value) : value);

/**
 * The envelope text the splice builds for each call of `bodyText`, next to normaliseCall's
 * envelope of the parsed call (undefined where the route takes the parsed path).
 */
function bothWays(bodyText: string, requestFacts: (body: ReturnType<typeof splitBody>) => RequestFacts) {
  const parsed = parseJsonWithText(Buffer.from(bodyText));
  assert.ok(parsed.text !== undefined, 'plain JSON.parse path');
  const body = splitBody(parsed.value, 2500);
  const layout = callLayout(parsed.text, parsed.value as JsonObject, body.calls);
  assert.ok(layout);
  const f = requestFacts(body);
  return body.calls.map((call, i) => {
    const members = layout.calls[i];
    const expected = normaliseCall(call, i, f);
    if (!members || !expected.ok) return undefined;
    const checked = checkCall(call, i, f);
    assert.ok(checked.ok);
    return { spliced: spliceEnvelope(parsed.text!, members, checked.checked, f), expected: expected.envelope };
  });
}

const batchFacts = (body: ReturnType<typeof splitBody>) =>
  facts({
    ...(body.context && { batchContext: body.context }),
    ...(body.integrations && { batchIntegrations: body.integrations }),
    ...(body.sentAt !== undefined && { batchSentAt: body.sentAt }),
  });

test('member scan: strings ending in backslashes, braces inside strings, nesting, spacing', () => {
  const text = ' { "a\\\\" : "x\\"}]{" , "b":[1,{"c":"\\\\"}, "]"] ,"n":-1.5e3 ,"t":true,"z":null , "e":{} }';
  const members = objectMembers(text, 1);
  const keys = [];
  const values = [];
  for (let m = 0; m < members.at.length; m += 4) {
    keys.push(memberKey(text, members, m));
    values.push(JSON.parse(text.slice(members.at[m + 2], members.at[m + 3])));
  }
  assert.deepEqual(keys, ['a\\', 'b', 'n', 't', 'z', 'e']);
  assert.deepEqual(values, ['x"}]{', [1, { c: '\\' }, ']'], -1500, true, null, {}]);
  assert.equal(members.end, text.length);
});

test('locateCalls: the last batch key counts; non-object elements are marked', () => {
  const text = '{"batch":"first","batch":[{"type":"track"}, 7, {"b":[{}]}],"writeKey":"k"}';
  const located = locateCalls(text)!;
  assert.equal(located.calls.length, 3);
  assert.equal(located.calls[1], undefined);
  assert.equal(text.slice(located.calls[2]!.start, located.calls[2]!.end), '{"b":[{}]}');
  assert.equal(locateCalls('{"batch":{"a":1}}'), undefined);
  assert.equal(locateCalls('[1]'), undefined);
  const single = locateCalls('{"type":"track","userId":"u"}')!;
  assert.equal(single.calls.length, 1);
});

test('spliced envelope = normaliseCall envelope: hand-picked calls, three text styles', () => {
  const calls: JsonObject[] = [
    {
      type: 'track',
      userId: 'u1',
      event: 'E',
      messageId: 'm1',
      timestamp: '2026-11-21T23:00:00.000Z',
      properties: { total: 1.5, items: [{ sku: 'a"b' }] },
      context: { library: { name: 'x' } },
    },
    { type: 'identify', anonymousId: 'a', traits: { 'spaced key': 'v', '7': 'int-like key' }, context: {} },
    { type: 'page', userId: 42, context: { ip: '10.0.0.1' }, name: 'Home', timestamp: '2015-02-03T08:24:14-0800' },
    {
      sourceId: 'spoofed',
      receivedAt: 'spoofed',
      originalTimestamp: 'kept: no timestamp sent',
      type: 'screen',
      userId: 'u',
      context: null,
    },
    { type: 'group', userId: 'u', groupId: 12, integrations: { All: false, Webhooks: true }, traits: {} },
    {
      type: 'alias',
      userId: 'new',
      previousId: 7,
      writeKey: 'secret',
      sentAt: '2026-11-21T23:00:04.000Z',
      timestamp: '2026-11-21T23:00:01.000Z',
    },
    { userId: 'u', type: 'track', event: 'Ünïcödé ✓ 😀', properties: { '\n': 'new\nline', big: 1e21, small: 1e-7 } },
    { context: { page: { url: 'https://x/?a={b}' } }, event: 'E', userId: 'u', type: 'track', messageId: 99 },
  ];
  const styles = [
    (v: unknown) => JSON.stringify(v),
    (v: unknown) => JSON.stringify(v, null, 2),
    // Python's json.dumps spacing, keeping non-ASCII as is (ensure_ascii=False).
    (v: unknown) => JSON.stringify(v).replace(/("(?:[^"\\]|\\.)*")|([,:])/g, (_, s: string, p: string) => s ?? `${p} `),
  ];
  for (const style of styles) {
    for (const withBatchFields of [false, true]) {
      const body = {
        batch: calls,
        ...(withBatchFields && {
          context: { library: { name: 'go' } },
          integrations: { Foo: false },
          sentAt: '2026-11-21T23:00:03.000Z',
        }),
      };
      const results = bothWays(style(body), batchFacts);
      results.forEach((r, i) => {
        assert.ok(r, `call ${i} takes the splice path`);
        assert.equal(canonical(r.spliced), canonical(r.expected), `call ${i}`);
      });
    }
  }
});

test('single-call route: the route type replaces the call type in place', () => {
  const text = '{"writeKey":"k","type":"identify","userId":"u","event":"E","context":{"a":1}}';
  const [r] = bothWays(text, () => facts({ routeType: 'track' }));
  assert.ok(r);
  assert.equal(canonical(r.spliced), canonical(r.expected));
  assert.equal(JSON.parse(r.spliced).type, 'track');
  assert.equal(JSON.parse(r.spliced).writeKey, undefined);
});

test('a call with a repeated key is left to the parsed path', () => {
  const [r] = bothWays('{"batch":[{"type":"track","userId":"a","event":"E","userId":"b"}]}', batchFacts);
  assert.equal(r, undefined);
});

// Calls drawn at random: every envelope field's name may appear in the call, in any order.
const key = fc.constantFrom(
  'type',
  'userId',
  'anonymousId',
  'messageId',
  'timestamp',
  'sentAt',
  'event',
  'name',
  'category',
  'groupId',
  'previousId',
  'context',
  'integrations',
  'properties',
  'traits',
  'sourceId',
  'receivedAt',
  'originalTimestamp',
  'writeKey',
  'version',
  '0',
  '12',
  'x y',
  'a"b',
  'ü',
);
const anyValue = fc
  .jsonValue({ maxDepth: 3 })
  .filter((v) => !JSON.stringify(v).includes('__proto__') && !JSON.stringify(v).includes('constructor'));
const typed: Record<string, fc.Arbitrary<unknown>> = {
  type: fc.constantFrom('track', 'identify', 'page', 'screen', 'group', 'alias'),
  userId: fc.oneof(fc.string(), fc.integer()),
  anonymousId: fc.string(),
  event: fc.string(),
  groupId: fc.oneof(fc.string(), fc.integer()),
  previousId: fc.oneof(fc.string(), fc.integer()),
  timestamp: fc.constantFrom('2026-11-21T22:59:00.000Z', '2015-02-03T08:24:14-0800', 'not a time', 5),
  sentAt: fc.constantFrom('2026-11-21T23:00:04.000Z', '2026-11-22T00:00:04+01:00'),
  context: fc.oneof(fc.dictionary(fc.constantFrom('ip', 'library', 'page', 'k'), anyValue), fc.constant(null)),
  integrations: fc.dictionary(fc.constantFrom('All', 'Webhooks', 'X'), fc.boolean()),
  properties: fc.dictionary(fc.string(), anyValue),
  traits: fc.dictionary(fc.string(), anyValue),
};
const call = fc
  .uniqueArray(key, { minLength: 1, maxLength: 14 })
  .chain((keys) =>
    fc
      .tuple(...keys.map((k) => typed[k] ?? anyValue))
      .map((values) => Object.fromEntries(keys.map((k, i) => [k, values[i]]))),
  );

test('spliced envelope = normaliseCall envelope for random calls (fast-check)', () => {
  fc.assert(
    fc.property(
      fc.array(call, { minLength: 1, maxLength: 8 }),
      fc.boolean(),
      fc.boolean(),
      (calls, pretty, batchContext) => {
        const body = {
          batch: calls,
          ...(batchContext && { context: { library: { name: 'go' } }, sentAt: '2026-11-21T23:00:04.000Z' }),
        };
        const text = pretty ? JSON.stringify(body, null, 1) : JSON.stringify(body);
        if (text.includes('\\u') || text.includes('__proto__') || text.includes('constructor')) return; // parsed path
        for (const r of bothWays(text, batchFacts)) {
          if (r) assert.equal(canonical(r.spliced), canonical(r.expected));
        }
      },
    ),
    { numRuns: 400, seed: 20261122 },
  );
});

test('jsonText writes what JSON.stringify writes; specialKeyAt matches a key only as written plainly', () => {
  const strings = [
    '',
    'plain',
    'a"b',
    'a\\b',
    'tab\there',
    '\u0000',
    '\u001f',
    ' ',
    '\ud83d\ude00',
    '\ud800',
    'x\udfff',
    'é€',
  ];
  for (const s of strings) assert.equal(jsonText(s), JSON.stringify(s), JSON.stringify(s));
  for (const v of [null, 0, -1.5e300, true, { a: [1, 'x"'] }, ['\ud800']]) assert.equal(jsonText(v), JSON.stringify(v));
  const text = '{"type":1,"user\\nId":2,"userId":3,"typo":4,"messageIds":5,"context":6}';
  const members = objectMembers(text, 0);
  const found = [];
  for (let m = 0; m < members.at.length; m += 4) found.push(specialKeyAt(text, members.at[m]!, members.at[m + 1]!));
  assert.deepEqual(found, ['type', undefined, 'userId', undefined, undefined, 'context']);
});
