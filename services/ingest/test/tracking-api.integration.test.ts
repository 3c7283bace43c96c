import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { randomUUID } from 'node:crypto';
import { REJECT_HEADERS } from '@sluice/envelope';
import { jsonValues, readTopic } from '@sluice/testkit';
import { basic, ingestConfig, OTHER_KEY, post, startIngest, WRITE_KEY, type RunningIngest } from './helpers.ts';

const ROUTES = ['identify', 'track', 'page', 'screen', 'group', 'alias'] as const;
const minimal = (type: string, id: string) =>
  ({
    identify: { userId: `u-${id}`, traits: { plan: 'pro' } },
    track: { userId: `u-${id}`, event: 'Bought' },
    page: { anonymousId: `a-${id}`, properties: { path: '/p' } },
    screen: { userId: `u-${id}`, name: 'Home' },
    group: { userId: `u-${id}`, groupId: 'g1' },
    alias: { userId: `u-${id}`, previousId: `p-${id}` },
  })[type]!;

describe('tracking API against the real broker', () => {
  let ingest: RunningIngest;
  /** messageId → what the envelope on sluice.events must contain. */
  const expectedEvents = new Map<string, Record<string, unknown>>();
  /** `<code>` of every rejection reported in a 200 body, with the call's marker. */
  const expectedRejections: { code: string; marker: string; index: number }[] = [];

  before(async () => {
    ingest = await startIngest(ingestConfig({ ingest: { trustProxy: true, linger: '2ms' } }));
  });
  after(async () => {
    await ingest.service.close();
  });

  test('every single-call route with Basic auth (with and without colon) and with writeKey in the body', async () => {
    for (const type of ROUTES) {
      for (const auth of ['colon', 'no-colon', 'body'] as const) {
        const messageId = randomUUID();
        const body = { ...minimal(type, messageId), messageId, ...(auth === 'body' && { writeKey: 'wk_rotated_a' }) };
        const headers: Record<string, string> =
          auth === 'body' ? {} : { authorization: basic(WRITE_KEY, auth === 'colon') };
        const res = await post(`${ingest.url}/v1/${type}`, body, headers);
        assert.equal(res.status, 200, `${type} ${auth}: ${JSON.stringify(res.json)}`);
        assert.deepEqual(res.json, { success: true, accepted: 1 });
        expectedEvents.set(messageId, { type, sourceId: 'src-a' });
      }
    }
  });

  test('/v1/batch and /v1/import; batch context merged under the call; second source keyed apart', async () => {
    const ids = [randomUUID(), randomUUID()];
    const res = await post(
      `${ingest.url}/v1/batch`,
      {
        batch: [
          { type: 'track', userId: 'u-batch', event: 'E', messageId: ids[0], context: { locale: 'fr' } },
          { type: 'identify', userId: 'u-batch', messageId: ids[1] },
        ],
        context: { library: { name: 'analytics-go', version: '2.0.0' }, locale: 'en' },
      },
      { authorization: basic(OTHER_KEY) },
    );
    assert.deepEqual(res.json, { success: true, accepted: 2 });
    expectedEvents.set(ids[0]!, {
      sourceId: 'src-b',
      context: { library: { name: 'analytics-go', version: '2.0.0' }, locale: 'fr', ip: '127.0.0.1' },
      key: 'src-b:u-batch',
    });
    expectedEvents.set(ids[1]!, { sourceId: 'src-b', key: 'src-b:u-batch' });
    // Trailing slash tolerated; the same batch body on /v1/import.
    const id = randomUUID();
    const imp = await post(
      `${ingest.url}/v1/import/`,
      { batch: [{ type: 'page', anonymousId: 'anon-1', messageId: id }] },
      { authorization: basic(WRITE_KEY) },
    );
    assert.deepEqual(imp.json, { success: true, accepted: 1 });
    expectedEvents.set(id, { sourceId: 'src-a', userId: null, anonymousId: 'anon-1', key: 'src-a:anon-1' });
  });

  test('analytics-go v1 (/v1/import, batch messageId, no sentAt), v2 (-0800 offsets), v3 (RFC 3339 + sentAt)', async () => {
    const v1 = randomUUID();
    let res = await post(
      `${ingest.url}/v1/import`,
      {
        batch: [{ type: 'track', userId: 'go1', event: 'E', messageId: v1, timestamp: '2015-02-03T08:24:14.5-08:00' }],
        messageId: randomUUID(),
      },
      { authorization: basic(WRITE_KEY) },
    );
    assert.equal(res.status, 200);
    expectedEvents.set(v1, { timestamp: '2015-02-03T16:24:14.500Z', originalTimestamp: '2015-02-03T16:24:14.500Z' });
    const v2 = randomUUID();
    res = await post(
      `${ingest.url}/v1/batch`,
      {
        batch: [
          {
            type: 'page',
            userId: 'go2',
            name: 'Docs',
            properties: { url: 'https://x/docs' },
            messageId: v2,
            timestamp: '2015-02-03T08:24:14-0800',
          },
        ],
        context: { library: { name: 'analytics-go', version: '2.1.0' } },
        messageId: randomUUID(),
      },
      { authorization: basic(WRITE_KEY, false) },
    );
    assert.equal(res.status, 200);
    expectedEvents.set(v2, {
      timestamp: '2015-02-03T16:24:14.000Z',
      name: 'Docs',
      properties: { url: 'https://x/docs' },
    });
    // v3: a client clock 1 hour fast is corrected by sentAt.
    const v3 = randomUUID();
    const clientNow = Date.now() + 3_600_000;
    const before = Date.now();
    res = await post(
      `${ingest.url}/v1/batch`,
      {
        batch: [
          { type: 'identify', userId: 'go3', messageId: v3, timestamp: new Date(clientNow - 60_000).toISOString() },
        ],
        sentAt: new Date(clientNow).toISOString(),
      },
      { authorization: basic(WRITE_KEY) },
    );
    assert.equal(res.status, 200);
    expectedEvents.set(v3, { skewCorrectedAround: before - 60_000 });
    // No timestamp at all → receivedAt.
    const none = randomUUID();
    res = await post(
      `${ingest.url}/v1/track`,
      { userId: 'nt', event: 'E', messageId: none },
      { authorization: basic(WRITE_KEY) },
    );
    expectedEvents.set(none, { timestampIsReceivedAt: true });
  });

  test('gzip bodies (Python client) and a messageId generated when missing', async () => {
    const id = randomUUID();
    const body = gzipSync(
      JSON.stringify({
        batch: [
          { type: 'track', userId: 'py', event: 'Gz', messageId: id, context: { ip: '10.0.0.1' } },
          { type: 'track', userId: 'py-nomsg', event: 'NoId' },
        ],
      }),
    );
    const res = await post(`${ingest.url}/v1/batch`, body, {
      authorization: basic(WRITE_KEY),
      'content-encoding': 'gzip',
    });
    assert.deepEqual(res.json, { success: true, accepted: 2 });
    expectedEvents.set(id, { event: 'Gz', context: { ip: '10.0.0.1' } });
  });

  test('unknown or missing write key → 401', async () => {
    const call = { userId: 'u', event: 'E' };
    for (const headers of [{ authorization: basic('nope') }, {}, { authorization: 'Bearer xyz' }] as Record<
      string,
      string
    >[]) {
      const res = await post(`${ingest.url}/v1/track`, call, headers);
      assert.equal(res.status, 401);
      assert.deepEqual(res.json, { success: false, code: 'unauthorized', message: 'missing or unknown write key' });
    }
    const res = await post(`${ingest.url}/v1/track`, { ...call, writeKey: 'nope' });
    assert.equal(res.status, 401);
  });

  test('whole-request errors: status and body', async () => {
    const auth = { authorization: basic(WRITE_KEY) };
    const cases: [string, unknown, Record<string, string>, number, string][] = [
      ['invalid JSON', '{"userId": ', auth, 400, 'invalid_json'],
      ['empty body', '', auth, 400, 'invalid_json'],
      [
        'malformed gzip',
        Buffer.from('definitely not gzip'),
        { ...auth, 'content-encoding': 'gzip' },
        400,
        'invalid_encoding',
      ],
      [
        'body over 500 KB',
        JSON.stringify({ batch: [{ type: 'track', userId: 'u', event: 'E', properties: { p: 'x'.repeat(500_001) } }] }),
        auth,
        400,
        'body_too_large',
      ],
      [
        'gzip inflating over 500 KB',
        gzipSync(
          JSON.stringify({
            batch: Array.from({ length: 30 }, () => ({
              type: 'track',
              userId: 'u',
              event: 'E',
              properties: { p: 'y'.repeat(20_000) },
            })),
          }),
        ),
        { ...auth, 'content-encoding': 'gzip' },
        400,
        'body_too_large',
      ],
      [
        'too many calls',
        JSON.stringify({ batch: Array.from({ length: 2_501 }, () => ({ type: 'track', userId: 'u', event: 'E' })) }),
        auth,
        400,
        'too_many_calls',
      ],
      [
        'wrong content type',
        'a=b',
        { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
        415,
        'unsupported_media_type',
      ],
      ['unknown encoding', '{}', { ...auth, 'content-encoding': 'br' }, 415, 'unsupported_media_type'],
      ['not an object', '[1,2]', auth, 400, 'invalid_body'],
      ['batch not an array', '{"batch": {}}', auth, 400, 'invalid_body'],
    ];
    for (const [name, body, headers, status, code] of cases) {
      const res = await post(`${ingest.url}/v1/batch`, body, headers);
      assert.equal(res.status, status, name);
      assert.equal(res.json.success, false, name);
      assert.equal(res.json.code, code, name);
      assert.equal(typeof res.json.message, 'string', name);
    }
    const notFound = await post(`${ingest.url}/v1/nothing`, {}, auth);
    assert.equal(notFound.status, 404);
    const get = await fetch(`${ingest.url}/v1/track`);
    assert.equal(get.status, 405);
  });

  test('per-call rejections are reported in the 200 body (and land on sluice.rejected)', async () => {
    const marker = randomUUID();
    const good = randomUUID();
    const batch = [
      { type: 'track', userId: 'u', event: 'E', messageId: good },
      { type: 'purchase', userId: 'u', marker },
      { type: 'identify', marker },
      { type: 'track', userId: 'u', marker },
      { type: 'group', userId: 'u', marker },
      { type: 'alias', userId: 'u', marker },
      { type: 'track', userId: 'u', event: 'Big', marker, properties: { blob: 'z'.repeat(33_000) } },
    ];
    const res = await post(`${ingest.url}/v1/batch`, { batch }, { authorization: basic(WRITE_KEY) });
    assert.equal(res.status, 200);
    assert.equal(res.json.success, true);
    assert.equal(res.json.accepted, 1);
    const codes = [
      'unknown_type',
      'missing_identity',
      'missing_event',
      'missing_group_id',
      'missing_alias_ids',
      'call_too_large',
    ];
    assert.deepEqual(
      res.json.rejected.map((r: { index: number; code: string }) => [r.index, r.code]),
      codes.map((c, i) => [i + 1, c]),
    );
    for (const r of res.json.rejected) assert.equal(typeof r.message, 'string');
    codes.forEach((code, i) => expectedRejections.push({ code, marker, index: i + 1 }));
    expectedEvents.set(good, { sourceId: 'src-a' });
  });

  test('prototype pollution: __proto__ and constructor.prototype keys do not pollute', async () => {
    const id = randomUUID();
    const raw = `{"userId":"proto","event":"E","messageId":"${id}","__proto__":{"polluted":"yes"},"properties":{"constructor":{"prototype":{"polluted":"yes"}},"__proto__":{"isAdmin":true}}}`;
    const res = await post(`${ingest.url}/v1/track`, raw, { authorization: basic(WRITE_KEY) });
    assert.equal(res.status, 200);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(({} as Record<string, unknown>).isAdmin, undefined);
    expectedEvents.set(id, { noPollution: true });
  });

  test('context.ip: first X-Forwarded-For hop when the proxy is trusted', async () => {
    const id = randomUUID();
    await post(
      `${ingest.url}/v1/identify`,
      { userId: 'ip', messageId: id },
      { authorization: basic(WRITE_KEY), 'x-forwarded-for': '198.51.100.7, 10.0.0.1' },
    );
    expectedEvents.set(id, { context: { ip: '198.51.100.7' } });
  });

  test('the topics hold every accepted call and every rejection, with the right fields', async () => {
    const { events, rejected } = ingest.config.kafka.topics;
    const records = await readTopic(ingest.kafka, events, {
      count: expectedEvents.size + 1,
      timeoutMs: 15_000,
      settleMs: 1_000,
    });
    const byId = new Map(records.map((r) => [JSON.parse(r.value!.toString()).messageId as string, r]));
    for (const [id, expect] of expectedEvents) {
      const record = byId.get(id);
      assert.ok(record, `event ${id} on ${events}`);
      const e = JSON.parse(record.value!.toString());
      assert.match(e.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.match(e.receivedAt, /Z$/);
      assert.equal(record.key, `${e.sourceId}:${e.userId ?? e.anonymousId}`);
      assert.equal('writeKey' in e, false);
      for (const [k, v] of Object.entries(expect)) {
        if (k === 'key') assert.equal(record.key, v);
        else if (k === 'skewCorrectedAround')
          assert.ok(Math.abs(Date.parse(e.timestamp) - (v as number)) < 5_000, `skew corrected: ${e.timestamp}`);
        else if (k === 'timestampIsReceivedAt') assert.equal(e.timestamp, e.receivedAt);
        else if (k === 'noPollution') {
          assert.equal(Object.hasOwn(e, '__proto__'), false);
          assert.equal(Object.hasOwn(e.properties, '__proto__'), false);
          assert.equal(Object.hasOwn(e.properties, 'constructor'), false);
        } else assert.deepEqual(e[k], v, `${id} ${k}`);
      }
    }
    // Two events without messageId in the gzip test got generated UUIDs.
    const generated = jsonValues(records).find((e) => e.userId === 'py-nomsg');
    assert.match(String(generated?.messageId), /^[0-9a-f-]{36}$/);
    // Nothing else: each accepted call once.
    assert.equal(records.length, expectedEvents.size + 1);

    const rejections = await readTopic(ingest.kafka, rejected, { count: expectedRejections.length, timeoutMs: 8_000 });
    const found = rejections.filter((r) => r.value?.toString().includes(expectedRejections[0]!.marker));
    assert.equal(found.length, expectedRejections.length);
    for (const want of expectedRejections) {
      const r = found.find((x) => x.headers[REJECT_HEADERS.index] === String(want.index));
      assert.ok(r, `rejection ${want.index}`);
      assert.equal(r.headers[REJECT_HEADERS.code], want.code);
      assert.equal(r.headers[REJECT_HEADERS.origin], 'ingest');
      assert.equal(r.headers[REJECT_HEADERS.sourceId], 'src-a');
      assert.ok(r.headers[REJECT_HEADERS.message]);
      assert.equal(JSON.parse(r.value!.toString()).marker, want.marker);
    }
  });
});
