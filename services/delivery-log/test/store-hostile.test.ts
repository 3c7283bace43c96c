import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { MAX_RENDERED_EVENT_BYTES } from '../src/constants.ts';
import { EVENT_NOTES } from '../src/domain/event-text.ts';
import { type LogEntry, readRecord } from '../src/domain/records.ts';
import { storableJson } from '../src/domain/storable-text.ts';
import { attemptEntry, eventEntry, TEST_TOPICS, storeFixture, topicRecord } from './helpers.ts';

/** An event envelope whose `properties.n` is `raw`, written as is (not through JSON.stringify). */
const envelope = (messageId: string, raw: string, extra = '') =>
  `{"sourceId":"src","messageId":"${messageId}","type":"track","event":"P"${extra},"properties":{"n":${raw}}}`;

/** What PostgreSQL's numeric or JSON refuses or blows up, and what JavaScript reads oddly. */
const ODD: Record<string, string> = {
  'underflow-16384': '1e-16384',
  'underflow-20000': '1e-20000',
  'long-fraction': `0.${'0'.repeat(16_400)}1`,
  'overflow-400': '1e400',
  'prints-16k': '1e-16383',
  'nul-escape': '"a\\u0000b"',
  'lone-surrogate': '"x\\ud800y"',
  'lone-low-surrogate-key': '{"\\udc00":1}',
  'deep-10000': `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
  'string-500k': `"${'x'.repeat(500 * 1024)}"`,
  'duplicate-keys': '{"a":1,"a":2,"a":{"a":3}}',
  'year-minus-10000': '1',
};
const EXTRA: Record<string, string> = { 'year-minus-10000': ',"receivedAt":"-010000-01-01T00:00:00.000Z"' };

function entriesOf(texts: string[]): LogEntry[] {
  return texts.map((text) => {
    const read = readRecord(topicRecord(TEST_TOPICS.events, text), TEST_TOPICS);
    assert.ok(read.ok, `readable: ${text.slice(0, 80)}`);
    assert.equal(read.entry.kind, 'event');
    if (read.entry.kind !== 'event') throw new Error('not an event');
    read.entry.destinationIds = ['hooks'];
    return read.entry;
  });
}

/** Normalised JSON: -0 and 0, key order and Infinity/null compare as the database keeps them. */
const norm = (v: unknown) => JSON.parse(JSON.stringify(v));

describe('delivery-log store: no record stops the log', () => {
  const db = storeFixture();

  it('each odd value in a batch of good records: every good one stored, each odd one stored or kept as text with its reason', async () => {
    for (const [name, raw] of Object.entries(ODD)) {
      const batch = entriesOf([
        envelope(`good-before-${name}`, '1'),
        envelope(`odd-${name}`, raw, EXTRA[name]),
        envelope(`good-after-${name}`, '2'),
      ]);
      const report = await db.store.ingest(batch);
      assert.deepEqual(report.unstored, [], name);
      for (const good of [`good-before-${name}`, `good-after-${name}`]) {
        const m = await db.store.message('src', good);
        assert.ok(m, `${name}: ${good} stored`);
        assert.equal(m.eventNote, null);
        assert.equal((m.event as { sourceId: string }).sourceId, 'src');
        assert.equal(m.deliveries[0]!.state, 'delivering');
      }
      const odd = await db.store.message('src', `odd-${name}`);
      assert.ok(odd, `${name}: the odd event is findable`);
      assert.ok(JSON.stringify(odd).length < MAX_RENDERED_EVENT_BYTES + 16 * 1024, `${name}: its read is bounded`);
      if (odd.event === null) {
        assert.ok(odd.eventNote !== null && EVENT_NOTES.includes(odd.eventNote), `${name}: a reason`);
        assert.equal(typeof odd.eventText, 'string', `${name}: its text is kept`);
      } else {
        assert.deepEqual(
          norm(odd.event),
          norm(JSON.parse(storableJson(batch[1]!.kind === 'event' ? batch[1]!.event : ''))),
        );
      }
    }
    const notes = async (id: string) => (await db.store.message('src', `odd-${id}`))!.eventNote;
    assert.equal(await notes('underflow-16384'), 'number_out_of_range');
    assert.equal(await notes('prints-16k'), 'number_out_of_range', 'a number printed back as 16 KB is kept as written');
    assert.equal(await notes('deep-10000'), 'too_deep');
    assert.equal(await notes('string-500k'), 'too_large');
    assert.equal(await notes('overflow-400'), null, '1e400 is a number numeric keeps as JSON');
    assert.equal((await db.store.message('src', 'odd-prints-16k'))!.eventText, envelope('odd-prints-16k', '1e-16383'));
    const year = await db.store.message('src', 'odd-year-minus-10000');
    assert.equal(
      year!.receivedAt,
      new Date(1_700_000_000_000).toISOString(),
      'an unkeepable time gives the record time',
    );
  });

  it('what the database still refuses is written record by record: an event as flagged text, another record in unstored', async () => {
    // Entries made without readRecord: a `\u0000` escape the JSON type refuses, an attempt number past `integer`.
    const refusedJson = eventEntry({ messageId: 'raw-nul', event: envelope('raw-nul', '"\\u0000"') });
    const bigAttempt = attemptEntry({ messageId: 'big-attempt', attempt: 2 ** 40 });
    const good = eventEntry({ messageId: 'beside-refused' });
    const report = await db.store.ingest([refusedJson, bigAttempt, good]);
    assert.deepEqual(report.keptAsText, ['database_refused']);
    assert.deepEqual(report.unstored, [{ kind: 'attempt', reason: 'database_refused' }]);
    assert.ok(await db.store.message('src', 'beside-refused'));
    const kept = await db.store.message('src', 'raw-nul');
    assert.equal(kept!.eventNote, 'database_refused');
    assert.equal(kept!.eventText, refusedJson.event);
    const [row] = await db.sql.query<{ kind: string; reason: string; error: string }>(
      "select kind, reason, error from unstored where message_id = 'big-attempt'",
    );
    assert.equal(row!.kind, 'attempt');
    assert.match(row!.error, /range|integer/);
    const findable = await db.store.message('src', 'big-attempt');
    assert.deepEqual(
      findable!.unstored.map((u) => [u.kind, u.reason]),
      [['attempt', 'database_refused']],
      'findable through the API',
    );
  });

  it('a read of an event is bounded: longer than the cap, it is cut with a note', async () => {
    const big = JSON.stringify({ a: 'y'.repeat(MAX_RENDERED_EVENT_BYTES) });
    await db.sql.query(
      `insert into messages (source_id, message_id, received_at, event) values ('src', 'huge', now(), $1::text::jsonb)`,
      [big],
    );
    const m = await db.store.message('src', 'huge');
    assert.equal(m!.event, null);
    assert.equal(m!.eventNote, 'cut_for_display');
    assert.ok(Buffer.byteLength(m!.eventText!) <= MAX_RENDERED_EVENT_BYTES);
  });

  it('property: generated hostile JSON never fails a batch, and is kept as JSON or as text with a reason', async () => {
    const hostileNumber = fc.oneof(
      fc.constantFrom('1e-16384', '1e400', '-0', '1e-16383', '0.1e99999999999', '1E+308', '-1.5e-1000'),
      fc
        .tuple(fc.integer({ min: 0, max: 999 }), fc.integer({ min: -20_000, max: 20_000 }))
        .map(([m, e]) => `${m}e${e}`),
    );
    const hostileString = fc.string({ unit: 'binary', maxLength: 20 }).map((s) => JSON.stringify(s));
    const fragment = fc.oneof(
      hostileNumber,
      hostileString,
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
      fc.integer({ min: 1, max: 3_000 }).map((d) => `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`),
    );
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom('a', 'b', 'n', '\\u0000', '\\ud800'), fragment), { maxLength: 6 }),
        async (props) => {
          const id = `prop-${run++}`;
          const body = `{${props.map(([k, v]) => `"${k}":${v}`).join(',')}}`;
          const text = `{"sourceId":"src","messageId":"${id}","type":"track","properties":${body}}`;
          JSON.parse(text);
          const batch = entriesOf([envelope(`${id}-good`, '1'), text]);
          const report = await db.store.ingest(batch);
          assert.deepEqual(report.unstored, []);
          assert.ok(await db.store.message('src', `${id}-good`));
          const m = await db.store.message('src', id);
          assert.ok(m);
          if (m.event === null) assert.ok(m.eventNote !== null && typeof m.eventText === 'string');
          else assert.deepEqual(norm(m.event), norm(JSON.parse(storableJson(text))));
        },
      ),
      { numRuns: 40 },
    );
  });
});
