import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Sql } from '../src/adapters/db/database.ts';
import { ReplayLog } from '../src/adapters/db/replay-log.ts';
import { LogStore } from '../src/adapters/db/store.ts';
import { MAX_VIEW_ATTEMPTS, MAX_VIEW_REJECTED } from '../src/constants.ts';
import type { ReplayMarkerEntry } from '../src/domain/records.ts';
import { attemptEntry, deadEntry, eventEntry, rejectedEntry, testDatabase } from './helpers.ts';

const marker = (partition: number, offset: string, at: number): ReplayMarkerEntry => ({
  kind: 'replay-marker',
  position: { topic: 'dead-letter', partition, offset },
  at,
});

describe('delivery-log reads: capped message views, the dead-letter index, replays listed per message', () => {
  let sql: Sql;
  let store: LogStore;
  let replays: ReplayLog;
  before(async () => {
    sql = await testDatabase();
    store = new LogStore(sql);
    replays = new ReplayLog(sql);
  });
  after(() => sql.close());

  it('a message view lists the newest attempts and the first rejected bodies, with totals', async () => {
    const attempts = Array.from({ length: MAX_VIEW_ATTEMPTS + 20 }, (_, i) =>
      attemptEntry({ messageId: 'busy', attempt: i + 1, at: 2_000 + i }),
    );
    const rejections = Array.from({ length: MAX_VIEW_REJECTED + 2 }, (_, i) =>
      rejectedEntry({ messageId: 'busy', at: 1_500 + i, value: `body ${i}` }),
    );
    await store.ingest([eventEntry({ messageId: 'busy' }), ...attempts, ...rejections]);
    const m = (await store.message('src', 'busy'))!;
    assert.deepEqual(m.totals, { attempts: MAX_VIEW_ATTEMPTS + 20, replays: 0, rejectedValues: MAX_VIEW_REJECTED + 2 });
    assert.equal(m.attempts.length, MAX_VIEW_ATTEMPTS);
    assert.deepEqual(
      [m.attempts[0]!.attempt, m.attempts.at(-1)!.attempt],
      [21, MAX_VIEW_ATTEMPTS + 20],
      'the newest, oldest first',
    );
    assert.equal(m.rejectedValues.length, MAX_VIEW_REJECTED);
    assert.equal(m.rejectedValues[0], 'body 0');
  });

  it('the dead-letter index: matches by filter, takes markers before or after their letter, skips replayed ones', async () => {
    const letter = (messageId: string, offset: string, over = {}) =>
      deadEntry({
        messageId,
        position: { topic: 'dead-letter', partition: 1, offset },
        at: 5_000 + Number(offset),
        ...over,
      });
    // The marker of offset 11 is read before its dead letter (another lane, another batch).
    await replays.ingest([marker(1, '11', 9_000)]);
    await replays.ingest([
      letter('a', '10'),
      letter('b', '11'),
      letter('c', '12', { destinationId: 'other' }),
      letter('d', '13', { reason: 'window_exhausted' }),
    ]);
    await replays.ingest([letter('a', '10')]); // read twice: nothing changes
    const all = await replays.match('dead-letter', {}, 100);
    assert.deepEqual([all.matched, all.skippedAlreadyReplayed, all.notReplayed], [4, 1, 3]);
    assert.deepEqual(
      all.toReplay.map((p) => [p.offset, p.messageId]),
      [
        ['10', 'a'],
        ['12', 'c'],
        ['13', 'd'],
      ],
    );
    const hooks = await replays.match('dead-letter', { destinationId: 'hooks', reason: 'permanent_failure' }, 100);
    assert.deepEqual([hooks.matched, hooks.toReplay.map((p) => p.messageId)], [2, ['a']]);
    const since = await replays.match('dead-letter', { since: 5_012, until: 5_013 }, 100);
    assert.deepEqual(
      since.toReplay.map((p) => p.messageId),
      ['c'],
    );
    assert.equal((await replays.match('other-topic', {}, 100)).matched, 0);
    const capped = await replays.match('dead-letter', {}, 2);
    assert.deepEqual([capped.toReplay.length, capped.notReplayed], [2, 3]);

    await replays.markReplayed('dead-letter', [{ partition: 1, offset: '10' }], 9_500);
    assert.deepEqual((await replays.match('dead-letter', { messageId: 'a' }, 100)).skippedAlreadyReplayed, 1);
  });

  it('a bulk replay is listed on each message it re-injected', async () => {
    await store.ingest([
      eventEntry({ messageId: 'x' }),
      eventEntry({ messageId: 'y' }),
      eventEntry({ messageId: 'z' }),
    ]);
    await replays.record({
      at: 10_000,
      filter: { sourceId: 'src' },
      replayed: 2,
      matched: 2,
      messages: [
        { sourceId: 'src', messageId: 'x', destinationId: 'hooks' },
        { sourceId: 'src', messageId: 'y', destinationId: 'hooks' },
      ],
    });
    await replays.record({
      at: 11_000,
      sourceId: 'src',
      messageId: 'x',
      destinationId: 'hooks',
      filter: {},
      replayed: 1,
      matched: 1,
    });
    const x = (await store.message('src', 'x'))!;
    assert.deepEqual(x.replays, [
      { requestedAt: new Date(10_000).toISOString(), destinationId: 'hooks', replayed: 1, bulk: true },
      { requestedAt: new Date(11_000).toISOString(), destinationId: 'hooks', replayed: 1, bulk: false },
    ]);
    assert.equal(x.totals.replays, 2);
    assert.equal((await store.message('src', 'y'))!.replays.length, 1);
    assert.equal((await store.message('src', 'z'))!.replays.length, 0);
  });

  it('pruning removes the index rows past retention', async () => {
    await store.prune(5_012);
    const left = await replays.match('dead-letter', {}, 100);
    assert.deepEqual([left.matched, left.toReplay.map((p) => p.messageId)], [2, ['c', 'd']]);
  });
});
