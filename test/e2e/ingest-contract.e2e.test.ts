// What ingest accepts, the deliverer can deliver: random calls (null in every optional field,
// unicode, deep and wide nesting, huge numbers, white space) posted through the real HTTP route
// onto the real broker; every accepted record goes through the deliverer's own decode → route →
// render → sign → headers, and every refused call is named in the 200 body.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import fc from 'fast-check';
import { createJsonCodec } from '@sluice/codec';
import { encodeBody, renderBody, requestHeaders, routeEvent, signatureHeaders } from '@sluice/webhook';
import { createIngest } from '@sluice/ingest';
import { testConfig, testKafka, testServiceContext, type TopicWatcher, watchTopics } from '@sluice/testkit';

const WRITE_KEY = 'contract-key';
const SECRET = 'contract-secret';
const config = testConfig({
  ingest: { linger: '2ms' },
  sources: [{ id: 'contract', name: 'Contract', writeKeys: [WRITE_KEY] }],
  destinations: [
    {
      id: 'hook',
      name: 'Hook',
      type: 'webhooks',
      enabled: true,
      sourceIds: ['contract'],
      settings: {
        webhooks: [{ url: 'https://receiver.example/hook', headers: { 'X-Team': 'data' } }],
        sharedSecret: SECRET,
      },
    },
  ],
});
const ctx = testServiceContext('ingest', config);
let ingest: Awaited<ReturnType<ReturnType<typeof createIngest>['start']>>;
let events: TopicWatcher;
/** Every record read from sluice.events so far, by the marker member each generated call carries. */
const records = new Map<string, Buffer>();
let indexed = 0;
function indexRecords(): void {
  const read = events.records(config.kafka.topics.events);
  for (; indexed < read.length; indexed++) {
    const value = read[indexed]!.value!;
    const marker = /"marker"\s*:\s*"([^"]+)"/.exec(value.toString())?.[1];
    if (marker) records.set(marker, value);
  }
}

before(async () => {
  ingest = await createIngest(ctx, { port: 0, host: '127.0.0.1' }).start();
  const kafka = testKafka({ brokers: ctx.brokers, clientId: 'contract-reader', logger: ctx.logger });
  events = await watchTopics(kafka, [config.kafka.topics.events]);
});
after(async () => {
  await events.stop();
  await ingest.close();
});

// ---- JSON text with white space and number spellings JSON.stringify cannot write ----

type Node = { raw: string } | { obj: [string, Node][] } | { arr: Node[] } | string | number | boolean | null;

function write(node: Node, ws: string): string {
  if (node === null || typeof node !== 'object') return JSON.stringify(node);
  if ('raw' in node) return node.raw;
  if ('arr' in node) return `[${ws}${node.arr.map((n) => write(n, ws)).join(`${ws},${ws}`)}${ws}]`;
  return `{${ws}${node.obj.map(([k, v]) => `${JSON.stringify(k)}${ws}:${ws}${write(v, ws)}`).join(`${ws},${ws}`)}${ws}}`;
}

const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)), maxLength: 3 }),
  fc.constantFrom('', ' ', 'é', '\u0000', '\r\n', '€'.repeat(50)),
);
const hugeNumber = fc.oneof(
  fc.integer({ min: 300, max: 3_000 }).map((n) => ({ raw: `1${'0'.repeat(n)}` })),
  fc.constantFrom(
    { raw: '1e400' },
    { raw: '-1E999' },
    { raw: `0.${'0'.repeat(2_000)}1` },
    { raw: '-0' },
    { raw: '1e-400' },
  ),
);
const scalar: fc.Arbitrary<Node> = fc.oneof(
  {
    weight: 150,
    arbitrary: fc.oneof(
      text,
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
    ),
  },
  { weight: 1, arbitrary: hugeNumber },
);
const { tree } = fc.letrec<{ tree: Node }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('tree'), { maxLength: 4 }).map((arr) => ({ arr })),
    fc.array(fc.tuple(text, tie('tree')), { maxLength: 4 }).map((obj) => ({ obj })),
  ),
}));
/** Nested `levels` deep, as objects or arrays. */
const deep = fc.tuple(fc.integer({ min: 10, max: 120 }), fc.boolean()).map(([levels, asArray]): Node => {
  let node: Node = 1;
  for (let i = 0; i < levels; i++) node = asArray ? { arr: [node] } : { obj: [['n', node]] };
  return node;
});
const wide = fc
  .integer({ min: 100, max: 1_500 })
  .map((n): Node => ({ obj: Array.from({ length: n }, (_, i) => [`k${i}`, i % 3 === 0 ? `v${i}` : i]) }));
const anyValue = fc.oneof(
  { weight: 30, arbitrary: tree },
  { weight: 1, arbitrary: deep },
  { weight: 2, arbitrary: wide },
);
const objectValue = fc.oneof(
  { weight: 30, arbitrary: fc.array(fc.tuple(text, anyValue), { maxLength: 5 }).map((obj): Node => ({ obj })) },
  { weight: 1, arbitrary: deep.map((d): Node => ({ obj: [['d', d]] })) },
  { weight: 2, arbitrary: wide },
);
const iso = fc
  .date({ min: new Date('1900-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
  .map((d) => d.toISOString());

/** One optional field: absent, null, a value of its kind, or (weighted by `wild`) anything. */
const field = (good: fc.Arbitrary<Node>, wild: number) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: fc.constant(null) },
    { weight: 4, arbitrary: good },
    { weight: wild, arbitrary: anyValue },
  );
const idValue = fc.oneof(fc.uuid(), text, fc.integer(), fc.double({ noNaN: true }));
const CALL_TYPES = ['identify', 'track', 'page', 'screen', 'group', 'alias'] as const;

/** A call; `wild` is how often a field holds any value at all instead of one of its kind. */
const callWith = (wild: number) =>
  fc.record({
    type: fc.oneof(
      { weight: 12, arbitrary: fc.constantFrom<Node>(...CALL_TYPES) },
      { weight: wild, arbitrary: anyValue },
    ),
    userId: field(idValue, wild),
    anonymousId: field(idValue, wild),
    messageId: field(fc.oneof(fc.uuid(), text, fc.integer(), fc.string({ minLength: 120, maxLength: 140 })), wild),
    timestamp: field(fc.oneof(iso, text), wild),
    sentAt: field(iso, wild),
    originalTimestamp: field(iso, wild),
    receivedAt: field(iso, wild),
    context: field(objectValue, wild),
    integrations: field(
      fc.oneof(
        fc.constant<Node>({
          obj: [
            ['All', false],
            ['Webhooks', true],
          ],
        }),
        objectValue,
      ),
      wild,
    ),
    properties: field(objectValue, wild),
    traits: field(objectValue, wild),
    event: field(text, wild),
    name: field(text, wild),
    category: field(text, wild),
    groupId: field(idValue, wild),
    previousId: field(idValue, wild),
    extra: field(anyValue, wild),
  });
/** A call of a known type with what its type needs, its other fields as random as ever. */
const typedCall = fc.tuple(callWith(0), fc.constantFrom(...CALL_TYPES), fc.uuid()).map(([c, type, id]) => ({
  ...c,
  type,
  userId: id,
  ...(type === 'track' && { event: 'Order Completed' }),
  ...(type === 'group' && { groupId: 'g-1' }),
  ...(type === 'alias' && { previousId: 'p-1' }),
}));
const call = fc.oneof(typedCall, callWith(0), callWith(1), callWith(4));

const request = fc.record({
  calls: fc.array(call, { minLength: 1, maxLength: 6 }),
  single: fc.boolean(),
  ws: fc.oneof(
    { weight: 3, arbitrary: fc.constant('') },
    { weight: 3, arbitrary: fc.constantFrom(' ', '\n\t', '\r\n  ') },
    { weight: 1, arbitrary: fc.integer({ min: 500, max: 5_000 }).map((n) => ' '.repeat(n)) },
  ),
});

type Call = Record<string, Node | undefined>;
function callText(c: Call, marker: string, ws: string): string {
  const members: [string, Node][] = Object.entries(c).filter((e): e is [string, Node] => e[1] !== undefined);
  members.push(['marker', marker]);
  return write({ obj: members }, ws);
}

/** undici refuses a header value with other characters (its `headerCharRegex`). */
const SENDABLE_HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

async function waitFor(markers: string[]): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    indexRecords();
    const missing = markers.filter((m) => !records.has(m));
    if (missing.length === 0) return;
    if (Date.now() > deadline) throw new Error(`records missing: ${missing.join(', ')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

it('every call ingest accepts is decoded, routed, rendered and signed by the deliverer; every refusal is named', {
  timeout: 240_000,
}, async () => {
  const codec = createJsonCodec();
  const endpoint = config.destinations[0]!.endpoints[0]!;
  let accepted = 0;
  let refused = 0;
  await fc.assert(
    fc.asyncProperty(request, async ({ calls, single, ws }) => {
      const run = randomUUID();
      const markers = calls.map((_, i) => `${run}-${i}`);
      const body = single
        ? callText(calls[0]!, markers[0]!, ws)
        : `{${ws}"batch"${ws}:${ws}[${calls.map((c, i) => callText(c, markers[i]!, ws)).join(',')}]}`;
      const sent = single ? 1 : calls.length;
      const route = single
        ? `/v1/${CALL_TYPES.includes(calls[0]!.type as never) ? String(calls[0]!.type) : 'track'}`
        : '/v1/batch';
      const res = await fetch(`http://127.0.0.1:${ingest.port}${route}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`,
        },
        body,
      });
      if (Buffer.byteLength(body) > 500_000) {
        // Over the body limit (the white space can make it so): the whole request is refused.
        assert.equal(res.status, 400);
        assert.equal(((await res.json()) as { code: string }).code, 'body_too_large');
        return;
      }
      const answer = (await res.json()) as {
        success: boolean;
        accepted: number;
        rejected?: { index: number; code: string; message: string }[];
      };
      assert.equal(res.status, 200, JSON.stringify(answer));
      const rejections = answer.rejected ?? [];
      assert.equal(answer.accepted + rejections.length, sent, 'every call is accepted or named');
      const refusedIndexes = new Set(rejections.map((r) => r.index));
      assert.equal(refusedIndexes.size, rejections.length);
      for (const r of rejections) {
        assert.ok(r.index >= 0 && r.index < sent && r.code.length > 0 && r.message.length > 0, JSON.stringify(r));
      }
      const acceptedMarkers = markers.slice(0, sent).filter((_, i) => !refusedIndexes.has(i));
      accepted += acceptedMarkers.length;
      refused += rejections.length;
      await waitFor(acceptedMarkers);
      for (const marker of acceptedMarkers) {
        const value = records.get(marker)!;
        assert.ok(value.length <= 32_768, `stored ${value.length} bytes`);
        const decoded = await codec.decode(value);
        assert.ok(decoded.ok, `decode: ${decoded.ok ? '' : decoded.message}`);
        const event = decoded.envelope;
        routeEvent(event, config.destinations);
        const rendered = renderBody(event);
        assert.ok(rendered.ok, `render: ${rendered.ok ? '' : rendered.message}`);
        const bytes = encodeBody(rendered.body);
        const signing = config.destinations[0]!.signing;
        const headers = requestHeaders(
          endpoint,
          event.messageId,
          signatureHeaders(signing, event.messageId, bytes, Date.now()),
        );
        for (const [name, v] of Object.entries(headers)) assert.match(v, SENDABLE_HEADER_VALUE, `header ${name}`);
        new Headers(headers);
      }
    }),
    {
      numRuns: Number(process.env.CONTRACT_RUNS ?? 80),
      // The counterexample of a deep value is long: the error and the seed come first.
      reporter: (out) => {
        if (!out.failed) return;
        const counterexample = JSON.stringify(out.counterexample).slice(0, 3_000);
        throw new Error(
          `${String(out.errorInstance)}\nseed ${out.seed}, path ${out.counterexamplePath}\n${counterexample}`,
        );
      },
    },
  );
  // The generators reach both outcomes (a property that only ever refuses would prove nothing).
  assert.ok(accepted > 20 && refused > 20, `accepted ${accepted}, refused ${refused}`);
});
