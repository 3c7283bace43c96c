import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MIGRATIONS, migrate } from '../src/adapters/db/migrations.ts';
import { MAX_ID_LENGTH, MAX_VIEW_BATCH_EVENTS } from '../src/constants.ts';
import { readRecord } from '../src/domain/records.ts';
import { attemptEntry, eventEntry, storeFixture, TEST_TOPICS, topicRecord } from './helpers.ts';

/** An attempt record as the deliverer writes it to the attempts topic, read as the consumer hands it over. */
function readAttempt(over: Record<string, unknown>) {
  const record = topicRecord(
    TEST_TOPICS.attempts,
    JSON.stringify({
      messageId: 'hostile',
      sourceId: 'src',
      destinationId: 'hooks',
      eventType: 'track',
      endpoint: 'https://example.com/h',
      attempt: 1,
      latencyMs: 3,
      at: '2026-01-01T00:00:00.000Z',
      outcome: 'success',
      status: 200,
      ...over,
    }),
  );
  // Partition 1: the helpers' entries take partition 0 of the same topic name.
  const read = readRecord({ ...record, partition: 1 }, TEST_TOPICS);
  assert.ok(read.ok && read.entry.kind === 'attempt', 'the attempt is readable');
  return read.entry;
}

describe('delivery-log store: batched attempts', () => {
  const db = storeFixture();

  it('keeps the batch of each attempt row; a batch lists its events with their state, a partial failure per event', async () => {
    const batch = { batchId: 'b-1', batchSize: 3 };
    await db.store.ingest([
      eventEntry({ messageId: 'b1-a' }),
      eventEntry({ messageId: 'b1-b' }),
      eventEntry({ messageId: 'b1-c' }),
      attemptEntry({ messageId: 'b1-a', at: 2_000, outcome: 'success', status: 200, error: undefined, ...batch }),
      attemptEntry({ messageId: 'b1-b', at: 2_000, outcome: 'retryable', status: 503, error: 'x', ...batch }),
      attemptEntry({ messageId: 'b1-c', at: 2_000, outcome: 'permanent', status: 422, error: 'bad', ...batch }),
      attemptEntry({ messageId: 'b1-a', at: 1_000 }),
    ]);
    const a = (await db.store.message('src', 'b1-a'))!;
    assert.deepEqual(
      a.attempts.map((x) => [x.batchId, x.batchSize]),
      [
        [null, null],
        ['b-1', 3],
      ],
      'an attempt sent alone has no batch; the batched one names it',
    );
    const view = (await db.store.batch('b-1'))!;
    assert.equal(view.batchId, 'b-1');
    assert.equal(view.batchSize, 3);
    assert.deepEqual(view.totals, { attempts: 3, events: 3 });
    assert.deepEqual(
      view.events.map((e) => [e.messageId, e.destinationId, e.outcome, e.status, e.state, e.batchId]),
      [
        ['b1-a', 'hooks', 'success', 200, 'delivered', 'b-1'],
        ['b1-b', 'hooks', 'retryable', 503, 'retrying', 'b-1'],
        ['b1-c', 'hooks', 'permanent', 422, 'retrying', 'b-1'],
      ],
    );
    assert.equal(await db.store.batch('no-such-batch'), undefined);
  });

  it('a batch read twice changes nothing; attempts read before their events already give the state', async () => {
    const rows = [
      attemptEntry({ messageId: 'b2-a', batchId: 'b-2', batchSize: 2, outcome: 'success', status: 200 }),
      attemptEntry({ messageId: 'b2-b', batchId: 'b-2', batchSize: 2, outcome: 'success', status: 200 }),
    ];
    await db.store.ingest(rows);
    await db.store.ingest(rows);
    const view = (await db.store.batch('b-2'))!;
    assert.deepEqual(view.totals, { attempts: 2, events: 2 });
    assert.deepEqual(
      view.events.map((e) => e.state),
      ['delivered', 'delivered'],
    );
  });

  it(`a batch view is capped at ${MAX_VIEW_BATCH_EVENTS} rows, with its totals`, async () => {
    const rows = Array.from({ length: MAX_VIEW_BATCH_EVENTS + 5 }, (_, i) =>
      attemptEntry({ messageId: `big-${i}`, batchId: 'b-big', batchSize: MAX_VIEW_BATCH_EVENTS + 5, at: 5_000 + i }),
    );
    await db.store.ingest(rows);
    const view = (await db.store.batch('b-big'))!;
    assert.equal(view.events.length, MAX_VIEW_BATCH_EVENTS);
    assert.deepEqual(view.totals, { attempts: MAX_VIEW_BATCH_EVENTS + 5, events: MAX_VIEW_BATCH_EVENTS + 5 });
    assert.equal(view.events[0]!.messageId, 'big-0', 'oldest first');
  });

  it('hostile batch ids are bounded like the other ids: clipped, NUL and lone surrogates kept as U+FFFD', async () => {
    const long = `${'b'.repeat(10 * 1024)}`;
    const cases: [string, Record<string, unknown>, string | undefined, number | undefined][] = [
      ['long', { batchId: long, batchSize: 2 }, 'b'.repeat(MAX_ID_LENGTH), 2],
      ['nul', { batchId: 'a\u0000b', batchSize: 1 }, 'a\uFFFDb', 1],
      ['surrogate', { batchId: 'x\ud800y' }, 'x\uFFFDy', undefined],
      [
        'cut-pair',
        { batchId: `${'c'.repeat(MAX_ID_LENGTH - 1)}😀` },
        `${'c'.repeat(MAX_ID_LENGTH - 1)}\uFFFD`,
        undefined,
      ],
      ['odd-chars', { batchId: '../ <script>"\'%2F', batchSize: 2 ** 40 }, '../ <script>"\'%2F', undefined],
      ['not-a-string', { batchId: 42, batchSize: 3 }, undefined, undefined],
      ['empty', { batchId: '', batchSize: 3 }, undefined, undefined],
      ['negative-size', { batchId: 'neg', batchSize: -1 }, 'neg', undefined],
    ];
    const entries = cases.map(([name, over]) => readAttempt({ messageId: `hostile-${name}`, ...over }));
    const report = await db.store.ingest([eventEntry({ messageId: 'beside-hostile' }), ...entries]);
    assert.deepEqual(report.unstored, [], 'no attempt is refused for its batch');
    for (const [name, , batchId, batchSize] of cases) {
      const m = (await db.store.message('src', `hostile-${name}`))!;
      assert.deepEqual([m.attempts[0]!.batchId, m.attempts[0]!.batchSize], [batchId ?? null, batchSize ?? null], name);
      if (batchId !== undefined) {
        assert.ok(batchId.length <= MAX_ID_LENGTH);
        const view = await db.store.batch(batchId);
        assert.deepEqual(
          view?.events.map((e) => e.messageId),
          [`hostile-${name}`],
          `${name}: the batch opens under the id the attempt shows`,
        );
      }
    }
    assert.ok(await db.store.message('src', 'beside-hostile'));
  });

  it('a database from before batches migrates: its attempts read with no batch', async () => {
    // Back to the schema before the batch migration, with an attempt written then.
    await db.store.ingest([eventEntry({ messageId: 'before-batches' })]);
    await db.sql.query('drop index attempts_batch');
    await db.sql.query('alter table attempts drop column batch_id');
    await db.sql.query('alter table attempts drop column batch_size');
    // Only the batch migration is undone (later ones stay applied).
    const version = MIGRATIONS.findIndex((m) => m.includes('add column batch_id')) + 1;
    assert.ok(version > 0);
    await db.sql.query('delete from schema_migrations where version = $1', [version]);
    await db.sql.query(
      `insert into attempts (topic, partition, record_offset, source_id, message_id, destination_id, endpoint, attempt,
         at, outcome, latency_ms) values ('attempts', 9, 1, 'src', 'before-batches', 'hooks', 'e', 1, now(), 'success', 1)`,
    );
    await migrate(db.sql);
    const m = (await db.store.message('src', 'before-batches'))!;
    assert.deepEqual([m.attempts[0]!.batchId, m.attempts[0]!.batchSize], [null, null]);
    await db.store.ingest([attemptEntry({ messageId: 'after-migration', batchId: 'b-after', batchSize: 1 })]);
    assert.equal((await db.store.batch('b-after'))!.events[0]!.messageId, 'after-migration');
  });
});
