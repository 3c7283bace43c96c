import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createJsonCodec } from '@sluice/codec';
import { REJECT_HEADERS } from '@sluice/envelope';
import { readTopic, scrapeMetrics } from '@sluice/testkit';
import { basic, ingestConfig, OTHER_KEY, post, startIngest, WRITE_KEY, type RunningIngest } from './helpers.ts';

/** Hostile input at the tracking API: each limit of docs/ingest.md "Limits at the door", over HTTP and the real broker. */
describe('limits at the door', () => {
  let ingest: RunningIngest;
  const auth = { authorization: basic(WRITE_KEY) };
  /** Markers of calls that must be on sluice.events, with a check of the stored record. */
  const stored = new Map<string, (value: Buffer) => void>();
  /** Markers of calls that must be on sluice.rejected, with their code. */
  const rejected = new Map<string, string>();

  before(async () => {
    ingest = await startIngest(
      ingestConfig({
        ingest: { linger: '2ms' },
        sources: [
          { id: 'src-a', name: 'A', writeKeys: [WRITE_KEY] },
          { id: 'src-b', name: 'B', writeKeys: [OTHER_KEY], rateLimit: { perSecond: 10 } },
        ],
      }),
    );
  });
  after(async () => {
    await ingest.service.close();
  });

  test('{"batch": null} and {"batch": []} answer 200 with nothing accepted', async () => {
    for (const body of ['{"batch":null}', '{"batch":[]}', `{"batch":null,"writeKey":"${WRITE_KEY}"}`]) {
      const res = await post(`${ingest.url}/v1/batch`, body, body.includes('writeKey') ? {} : auth);
      assert.equal(res.status, 200, body);
      assert.deepEqual(res.json, { success: true, accepted: 0 }, body);
    }
  });

  test('a 10,000-deep call is refused in the 200 body, quickly, and lands on the rejected topic', async () => {
    const marker = randomUUID();
    const deep = `{"type":"identify","userId":"u","marker":"${marker}","traits":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    const started = Date.now();
    const res = await post(`${ingest.url}/v1/batch`, `{"batch":[${deep},{"type":"identify","userId":"u-ok"}]}`, auth);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.equal(res.json.accepted, 1);
    assert.deepEqual(
      res.json.rejected.map((r: { index: number; code: string }) => [r.index, r.code]),
      [[0, 'too_deep']],
    );
    assert.ok(Date.now() - started < 2_000);
    rejected.set(marker, 'too_deep');
  });

  test('a number beyond float range is refused, not stored as null', async () => {
    const marker = randomUUID();
    const res = await post(
      `${ingest.url}/v1/track`,
      `{"userId":"u","event":"E","marker":"${marker}","properties":{"n":1${'0'.repeat(400_000)}}}`,
      auth,
    );
    assert.equal(res.status, 200);
    assert.equal(res.json.rejected?.[0]?.code, 'number_out_of_range');
    rejected.set(marker, 'number_out_of_range');
  });

  test('450 KB of white space inside one call makes a compact record, under the 32 KB limit', async () => {
    const marker = randomUUID();
    const pad = ' '.repeat(225_000); // twice: 450 KB
    const res = await post(
      `${ingest.url}/v1/track`,
      `{"userId":"u","event":"E","marker":"${marker}","properties":{"a":${pad}1,${pad}"b":"x"}}`,
      auth,
    );
    assert.deepEqual(res.json, { success: true, accepted: 1 });
    stored.set(marker, (value) => {
      assert.ok(value.length < 1_000, `stored ${value.length} bytes`);
      assert.deepEqual(JSON.parse(value.toString()).properties, { a: 1, b: 'x' });
    });
  });

  test('a call whose stored envelope would pass 32 KB is refused (the limit applies to what is stored)', async () => {
    const marker = randomUUID();
    // 32,700 bytes as sent, plus the envelope's own fields.
    const res = await post(
      `${ingest.url}/v1/track`,
      { userId: 'u', event: 'E', marker, properties: { p: 'x'.repeat(32_700) } },
      auth,
    );
    assert.equal(res.json.rejected?.[0]?.code, 'call_too_large');
    rejected.set(marker, 'call_too_large');
  });

  test('messageId: control characters, non-ASCII and over 128 characters are refused; null is replaced', async () => {
    const markers = [randomUUID(), randomUUID(), randomUUID()];
    const nullId = randomUUID();
    const res = await post(
      `${ingest.url}/v1/batch`,
      {
        batch: [
          { type: 'identify', userId: 'u', messageId: 'm\r\nX-Evil: 1', marker: markers[0] },
          { type: 'identify', userId: 'u', messageId: '€'.repeat(300), marker: markers[1] },
          { type: 'identify', userId: 'u', messageId: 'x'.repeat(129), marker: markers[2] },
          { type: 'identify', userId: 'u', messageId: null, marker: nullId },
        ],
      },
      auth,
    );
    assert.equal(res.json.accepted, 1);
    assert.deepEqual(
      res.json.rejected.map((r: { code: string }) => r.code),
      ['invalid_message_id', 'invalid_message_id', 'invalid_message_id'],
    );
    for (const m of markers) rejected.set(m, 'invalid_message_id');
    stored.set(nullId, (value) => assert.match(JSON.parse(value.toString()).messageId, /^[0-9a-f-]{36}$/));
  });

  test('a writeKey in the body is stored nowhere, not even with a rejected call', async () => {
    const marker = randomUUID();
    const res = await post(`${ingest.url}/v1/batch`, {
      writeKey: WRITE_KEY,
      batch: [{ type: 'purchase', userId: 'u', marker, writeKey: WRITE_KEY }],
    });
    assert.equal(res.json.rejected?.[0]?.code, 'unknown_type');
    rejected.set(marker, 'unknown_type');
    const single = randomUUID();
    const res2 = await post(`${ingest.url}/v1/identify`, `{"writeKey":"${WRITE_KEY}","marker":"${single}","traits":7}`);
    assert.equal(res2.json.rejected?.[0]?.code, 'invalid_field');
    rejected.set(single, 'invalid_field');
  });

  test('metrics: 1,000 invented call types add no series', async () => {
    // Series of ingest's own metrics: the process and runtime metrics (GC, heap spaces) come and
    // go with what the process does, whatever the input.
    const ownSeries = (text: string) =>
      text
        .split('\n')
        .filter((line) => line !== '' && !line.startsWith('#') && !/^(sluice_)?(process|nodejs)_/.test(line));
    await post(`${ingest.url}/v1/batch`, { batch: [{ type: 'warmup', userId: 'u' }] }, auth);
    const before = ownSeries(await scrapeMetrics(ingest.url)).length;
    const batch = Array.from({ length: 1_000 }, (_, i) => ({ type: `invented${i}`, userId: 'u' }));
    const res = await post(`${ingest.url}/v1/batch`, { batch }, auth);
    assert.equal(res.json.rejected.length, 1_000);
    const text = await scrapeMetrics(ingest.url);
    const after = ownSeries(text).length;
    assert.equal(after, before, `series before ${before}, after ${after}`);
    assert.doesNotMatch(text, /invented/);
    const unknown =
      /sluice_ingest_events_total\{[^}]*source="src-a",type="unknown",outcome="rejected"[^}]*\} (\d+)/.exec(text);
    assert.ok(unknown && Number(unknown[1]) >= 1_000, 'counted under type="unknown"');
  });

  test('a 2,000-call batch on a 10 calls/s source is charged in full: the next request waits ~200 s', async () => {
    const batch = Array.from({ length: 2_000 }, () => ({ type: 'track', userId: 'u', event: 'E' }));
    const first = await post(`${ingest.url}/v1/batch`, { batch }, { authorization: basic(OTHER_KEY) });
    assert.equal(first.status, 200);
    const next = await post(`${ingest.url}/v1/track`, { userId: 'u', event: 'E' }, { authorization: basic(OTHER_KEY) });
    assert.equal(next.status, 429);
    assert.ok(Number(next.headers.get('retry-after')) >= 190, `Retry-After ${next.headers.get('retry-after')}`);
  });

  test('the topics: stored records are valid envelopes; rejected ones carry their code and no writeKey', async () => {
    const { events, rejected: rejectedTopic } = ingest.config.kafka.topics;
    const codec = createJsonCodec();
    const records = await readTopic(ingest.kafka, events, { count: 2_000 + stored.size, timeoutMs: 15_000 });
    for (const [marker, check] of stored) {
      const record = records.find((r) => r.value!.includes(marker));
      assert.ok(record, `stored ${marker}`);
      const decoded = await codec.decode(record.value);
      assert.ok(decoded.ok, decoded.ok ? '' : decoded.message);
      check(record.value!);
    }
    const rejections = await readTopic(ingest.kafka, rejectedTopic, {
      count: 1_000 + rejected.size,
      timeoutMs: 15_000,
    });
    for (const record of rejections)
      assert.equal(record.value?.includes(WRITE_KEY) ?? false, false, 'writeKey on the rejected topic');
    for (const [marker, code] of rejected) {
      const record = rejections.find((r) => r.value?.includes(marker));
      assert.ok(record, `rejected ${marker}`);
      assert.equal(record.headers[REJECT_HEADERS.code], code);
    }
  });
});
