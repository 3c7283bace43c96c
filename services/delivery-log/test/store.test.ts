import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Cursor } from '../src/domain/cursor.ts';
import { readRecord, type LogEntry } from '../src/domain/records.ts';
import {
  attemptEntry,
  deadEntry,
  eventEntry,
  rejectedEntry,
  storeFixture,
  TEST_TOPICS,
  topicRecord,
} from './helpers.ts';

describe('delivery-log store', () => {
  const db = storeFixture();

  it('keeps the event, every attempt and the state; a batch written twice changes nothing', async () => {
    const batch = [
      eventEntry({ messageId: 'twice' }),
      attemptEntry({ messageId: 'twice', at: 2_000 }),
      attemptEntry({ messageId: 'twice', attempt: 2, at: 3_000 }),
      attemptEntry({ messageId: 'twice', attempt: 3, at: 4_000, outcome: 'success', status: 200, error: undefined }),
    ];
    await db.store.ingest(batch);
    const first = await db.store.message('src', 'twice');
    await db.store.ingest(batch);
    const second = await db.store.message('src', 'twice');
    assert.deepEqual(second, first);
    assert.equal(first!.attempts.length, 3);
    const [kept] = await db.sql.query<{ t: string }>(
      "select jsonb_typeof(event) as t from messages where message_id = 'twice'",
    );
    assert.equal(kept!.t, 'object', 'the event is stored as a JSON object, not a string');
    assert.deepEqual(
      first!.deliveries.map((d) => [d.destinationId, d.state, d.attempts]),
      [['hooks', 'delivered', 3]],
    );
    assert.deepEqual(first!.event, JSON.parse(batch[0]!.kind === 'event' ? batch[0]!.event : ''));
  });

  it('an older failure read after the success never moves a delivered message back', async () => {
    await db.store.ingest([
      attemptEntry({ messageId: 'late', attempt: 2, at: 5_000, outcome: 'success', status: 200 }),
    ]);
    await db.store.ingest([
      attemptEntry({ messageId: 'late', attempt: 1, at: 4_000 }),
      deadEntry({ messageId: 'late', at: 4_500 }),
    ]);
    const m = await db.store.message('src', 'late');
    assert.equal(m!.deliveries[0]!.state, 'delivered');
    assert.equal(m!.attempts.length, 2);
  });

  it('dead wins over earlier failures, and an attempt after the death (a replay) moves it on', async () => {
    await db.store.ingest([
      eventEntry({ messageId: 'd' }),
      attemptEntry({ messageId: 'd', outcome: 'permanent', status: 404, at: 2_000 }),
    ]);
    await db.store.ingest([deadEntry({ messageId: 'd', at: 2_100 })]);
    assert.equal((await db.store.message('src', 'd'))!.deliveries[0]!.state, 'dead');
    await db.store.ingest([attemptEntry({ messageId: 'd', at: 1_900 })]);
    assert.equal((await db.store.message('src', 'd'))!.deliveries[0]!.state, 'dead', 'an older failure keeps it dead');
    await db.store.ingest([attemptEntry({ messageId: 'd', at: 9_000, outcome: 'success', status: 200 })]);
    const m = await db.store.message('src', 'd');
    assert.equal(m!.deliveries[0]!.state, 'delivered');
    assert.equal(m!.deliveries[0]!.deadReason, null);
  });

  it('a routed event without attempts is delivering; a rejection is kept with its reason', async () => {
    await db.store.ingest([eventEntry({ messageId: 'new', destinationIds: ['hooks', 'other'] }), rejectedEntry()]);
    const m = await db.store.message('src', 'new');
    assert.deepEqual(
      m!.deliveries.map((d) => [d.destinationId, d.state]),
      [
        ['hooks', 'delivering'],
        ['other', 'delivering'],
      ],
    );
    const r = await db.store.message('src', 'bad-1');
    assert.deepEqual(
      r!.deliveries.map((d) => [d.destinationId, d.state, d.reject]),
      [[null, 'rejected', { code: 'invalid_call', message: 'track needs event', origin: 'ingest' }]],
    );
  });

  it("a destination's filtered record makes its state filtered, with no attempt; read twice, the same", async () => {
    // The record as the deliverer writes it (docs/reference/filters.md): attempt 0, no endpoint.
    const record = topicRecord(
      TEST_TOPICS.attempts,
      JSON.stringify({
        messageId: 'skipped',
        sourceId: 'src',
        destinationId: 'hooks',
        eventType: 'track',
        endpoint: '',
        attempt: 0,
        outcome: 'filtered',
        latencyMs: 0,
        at: new Date(1_500).toISOString(),
      }),
    );
    const read = readRecord(record, TEST_TOPICS);
    assert.ok(read.ok && read.entry.kind === 'filtered');
    const batch = [eventEntry({ messageId: 'skipped', destinationIds: ['hooks', 'other'] }), read.entry as LogEntry];
    await db.store.ingest(batch);
    await db.store.ingest([read.entry as LogEntry]);
    const m = await db.store.message('src', 'skipped');
    assert.deepEqual(
      m!.deliveries.map((d) => [d.destinationId, d.state, d.attempts, d.lastError]),
      [
        ['hooks', 'filtered', 0, null],
        ['other', 'delivering', 0, null],
      ],
    );
    assert.equal(m!.attempts.length, 0, 'a filtered event has no attempt');
    const listed = await db.store.listMessages({ state: 'filtered' }, 10);
    assert.deepEqual(
      listed.map((s) => s.messageId),
      ['skipped'],
    );
  });

  it('a waiting record (per-user order) makes the state waiting, naming the event waited for; its attempt moves it on', async () => {
    const record = (outcome: string, at: number, extra: Record<string, unknown> = {}) =>
      topicRecord(
        TEST_TOPICS.attempts,
        JSON.stringify({
          messageId: 'behind',
          sourceId: 'src',
          destinationId: 'hooks',
          eventType: 'track',
          endpoint: extra.endpoint ?? '',
          attempt: extra.attempt ?? 0,
          outcome,
          latencyMs: 0,
          at: new Date(at).toISOString(),
          ...extra,
        }),
      );
    const waiting = readRecord(record('waiting', 2_000, { waitingFor: 'head-1' }), TEST_TOPICS);
    assert.ok(waiting.ok && waiting.entry.kind === 'waiting');
    await db.store.ingest([eventEntry({ messageId: 'behind', destinationIds: ['hooks'] }), waiting.entry as LogEntry]);
    await db.store.ingest([waiting.entry as LogEntry]);
    let m = await db.store.message('src', 'behind');
    assert.deepEqual(
      m!.deliveries.map((d) => [d.state, d.attempts, d.lastError]),
      [['waiting', 0, 'waiting for head-1']],
    );
    assert.deepEqual(
      (await db.store.listMessages({ state: 'waiting' }, 10)).map((s) => s.messageId),
      ['behind'],
    );
    const delivered = readRecord(
      { ...record('success', 3_000, { endpoint: 'https://h.example/x', attempt: 1, status: 200 }), partition: 7 },
      TEST_TOPICS,
    );
    assert.ok(delivered.ok);
    await db.store.ingest([delivered.entry as LogEntry, waiting.entry as LogEntry]);
    m = await db.store.message('src', 'behind');
    assert.deepEqual(
      m!.deliveries.map((d) => [d.state, d.attempts]),
      [['delivered', 1]],
    );
  });

  it('lists by state and destination with a stable keyset cursor over every page', async () => {
    const entries = [];
    for (let i = 0; i < 25; i++)
      entries.push(
        eventEntry({ sourceId: 'list', messageId: `l-${String(i).padStart(2, '0')}`, receivedAt: 10_000 + (i % 5) }),
      );
    await db.store.ingest(entries);
    const seen: string[] = [];
    let cursor: Cursor | undefined;
    for (let page = 0; page < 10; page++) {
      const rows = await db.store.listMessages(
        { sourceId: 'list', state: 'delivering', destinationId: 'hooks' },
        7,
        cursor,
      );
      seen.push(...rows.slice(0, 7).map((r) => r.messageId));
      if (rows.length <= 7) break;
      const last = rows[6]!;
      cursor = { receivedAt: Date.parse(last.receivedAt), sourceId: last.sourceId, messageId: last.messageId };
    }
    assert.equal(seen.length, 25);
    assert.equal(new Set(seen).size, 25);
    assert.deepEqual(await db.store.listMessages({ sourceId: 'list', state: 'dead' }, 10), []);
  });

  it('endpoint health: success rate, p50/p95 and the last error over the window', async () => {
    const at = 100_000;
    const entries = [];
    for (let i = 1; i <= 20; i++) {
      entries.push(
        attemptEntry({
          destinationId: 'health',
          messageId: `h${i}`,
          at: at + i,
          latencyMs: i * 10,
          outcome: i % 4 === 0 ? 'retryable' : 'success',
          status: i % 4 === 0 ? 500 : 200,
          error: i % 4 === 0 ? `http_500_${i}` : undefined,
        }),
      );
    }
    entries.push(attemptEntry({ destinationId: 'health', messageId: 'old', at: 1, latencyMs: 99_999 }));
    await db.store.ingest(entries);
    const [h] = await db.store.endpointHealth(at, 'health');
    assert.equal(h!.attempts, 20);
    assert.equal(h!.successRate, 0.75);
    assert.equal(h!.p50LatencyMs, 105);
    assert.equal(h!.p95LatencyMs, 190.5);
    assert.equal(h!.lastError!.error, 'http_500_20');
  });

  it('the same records in any order and any batching give the same state (replayed run included)', async () => {
    const run = (id: string) => [
      eventEntry({ sourceId: 'order', messageId: id }),
      attemptEntry({ sourceId: 'order', messageId: id, at: 2_000 }),
      attemptEntry({ sourceId: 'order', messageId: id, at: 3_000, outcome: 'permanent', status: 404 }),
      deadEntry({ sourceId: 'order', messageId: id, at: 3_500 }),
      attemptEntry({ sourceId: 'order', messageId: id, attempt: 1, at: 9_000, outcome: 'success', status: 200 }),
    ];
    const views = [];
    for (let trial = 0; trial < 6; trial++) {
      const id = `o-${trial}`;
      const entries = run(id);
      if (trial > 0) entries.sort(() => Math.random() - 0.5);
      while (entries.length > 0) await db.store.ingest(entries.splice(0, 1 + Math.floor(Math.random() * 3)));
      const m = await db.store.message('order', id);
      views.push(m!.deliveries.map((d) => [d.state, d.stateAt, d.attempts, d.deadReason]));
    }
    for (const v of views) assert.deepEqual(v, views[0]);
    assert.equal(views[0]![0]![0], 'delivered');
    assert.equal(views[0]![0]![2], 3);
  });

  it('an in-memory database keeps its tables out of the write-ahead log; a durable one does not', async () => {
    const rows = await db.sql.query<{ relname: string; relpersistence: string }>(
      `select relname, relpersistence from pg_class where relname in ('messages', 'deliveries', 'attempts', 'rejections', 'replays')
         and relnamespace = current_schema()::regnamespace`,
    );
    assert.equal(rows.length, 5);
    for (const r of rows) assert.equal(r.relpersistence, db.sql.durable ? 'p' : 'u', r.relname);
  });

  it('pruning deletes what was received before the cut, with its attempts, and keeps the rest', async () => {
    await db.store.ingest([
      eventEntry({ sourceId: 'prune', messageId: 'old', receivedAt: 50 }),
      attemptEntry({ sourceId: 'prune', messageId: 'old', at: 60 }),
      eventEntry({ sourceId: 'prune', messageId: 'kept', receivedAt: 500_000 }),
    ]);
    const deleted = await db.store.prune(400_000);
    assert.ok(deleted >= 1);
    assert.equal(await db.store.message('prune', 'old'), undefined);
    assert.ok(await db.store.message('prune', 'kept'));
    assert.equal(
      (await db.sql.query("select 1 from attempts where message_id = 'old' and source_id = 'prune'")).length,
      0,
    );
  });
});
