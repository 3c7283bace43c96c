import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ledgerRows } from '../src/adapters/db/ledger-store.ts';
import { LogStore } from '../src/adapters/db/store.ts';
import { LedgerTooWideError } from '../src/errors.ts';
import {
  ledgerCutoff,
  ledgerTotals,
  type LedgerPolicy,
  parseLedgerQuery,
  parseUnaccountedQuery,
} from '../src/domain/ledger.ts';
import type { LogEntry } from '../src/domain/records.ts';
import { attemptEntry, deadEntry, eventEntry, storeFixture, testDatabase } from './helpers.ts';

// The ledger's conformance suite (docs/delivery-log.md, "Ledger"): on the embedded database here,
// on PostgreSQL through ledger.postgres.integration.test.ts.

const MIN = 60_000;
const T0 = Date.UTC(2026, 0, 1, 12, 0);
const policy: LedgerPolicy = { windowMs: 10 * MIN, graceMs: 5 * MIN };
const filteredEntry = (messageId: string, at: number): LogEntry => ({
  kind: 'filtered',
  position: { topic: 'attempts', partition: 1, offset: String(at) },
  sourceId: 'src',
  messageId,
  destinationId: 'hooks',
  eventType: 'track',
  at,
});
const ok = { outcome: 'success' as const, status: 200, error: undefined };

/** One message of each fate at `hooks`, received in two minutes; one more at `other`. */
function fates(): LogEntry[] {
  const ev = (messageId: string, at: number, destinationIds = ['hooks']) =>
    eventEntry({ messageId, receivedAt: at, destinationIds });
  return [
    ev('delivered', T0),
    attemptEntry({ messageId: 'delivered', at: T0 + 1_000 }),
    attemptEntry({ messageId: 'delivered', attempt: 2, at: T0 + 5_000, ...ok }),
    ev('filtered', T0 + 2_000),
    filteredEntry('filtered', T0 + 2_100),
    ev('dead', T0 + 3_000),
    attemptEntry({ messageId: 'dead', at: T0 + 3_100, outcome: 'permanent', status: 404 }),
    deadEntry({ messageId: 'dead', at: T0 + 3_200 }),
    // Its trail stops: one retryable attempt, no retry, no dead letter.
    ev('stopped', T0 + MIN + 1_000),
    attemptEntry({ messageId: 'stopped', at: T0 + MIN + 2_000 }),
    attemptEntry({ messageId: 'stopped', attempt: 2, at: T0 + 3 * MIN }),
    // Nothing ever attempted.
    ev('untouched', T0 + MIN + 4_000),
    // Accepted late: still inside its window.
    ev('recent', T0 + 20 * MIN),
    ev('parked', T0 + MIN + 5_000, ['other']),
  ];
}

async function figuresOf(store: LogStore, now: number, parked: string[] = [], resumedAt?: number) {
  const cutoff = ledgerCutoff(now, policy, [
    { destinationId: 'hooks', parked: false, ...(resumedAt !== undefined && { resumedAt }) },
    ...parked.map((destinationId) => ({ destinationId, parked: true })),
  ]);
  const q = { from: T0 - MIN, to: T0 + 30 * MIN, bucketMs: MIN };
  return {
    rows: await store.ledger(q, cutoff),
    gauges: await store.ledgerGauges(cutoff),
    unaccounted: await store.unaccounted({ limit: 50 }, cutoff),
  };
}

describe('delivery-log ledger', () => {
  const db = storeFixture();
  /** `n` delivered deliveries of source `bulk` received from `at` on, one a millisecond, written straight to the table. */
  const bulk = (at: number, n: number, from = 0) =>
    db.sql.query(
      `insert into deliveries (source_id, message_id, destination_id, state, state_at, received_at, window_from)
       select 'bulk', 'b-' || i, 'hooks', 'delivered', to_timestamp(($1::double precision + i) / 1000.0),
         to_timestamp(($1::double precision + i) / 1000.0), to_timestamp(($1::double precision + i) / 1000.0)
       from generate_series($2::int, $3::int) i`,
      [at, from, from + n - 1],
    );

  it('a range holding more deliveries than one answer may read is refused (embedded: counted; PostgreSQL: timed out)', async () => {
    const at = Date.UTC(2026, 1, 1);
    const q = { from: at, to: at + 60 * MIN, bucketMs: MIN, sourceId: 'bulk' };
    const cutoff = ledgerCutoff(at + 60 * MIN, policy, []);
    const bounds = { embeddedRows: 50, statementTimeoutMs: 10_000 };
    await bulk(at, 50);
    const rows = await ledgerRows(db.sql, q, cutoff, bounds);
    assert.equal(ledgerTotals(rows)[0]!.delivered, 50, 'at the bound: read');
    if (db.sql.kind === 'embedded') {
      await bulk(at, 1, 50);
      await assert.rejects(ledgerRows(db.sql, q, cutoff, bounds), LedgerTooWideError);
      // The bound counts the range, whatever the filters select: one source of many is no way around it.
      await assert.rejects(ledgerRows(db.sql, { ...q, sourceId: 'none' }, cutoff, bounds), LedgerTooWideError);
    } else {
      await bulk(at, 100_000, 51);
      await assert.rejects(ledgerRows(db.sql, q, cutoff, { ...bounds, statementTimeoutMs: 1 }), LedgerTooWideError);
      assert.equal(ledgerTotals(await ledgerRows(db.sql, q, cutoff, bounds))[0]!.delivered, 100_050, 'in time: read');
    }
  });

  it('counts each fate per bucket of receive time; unaccounted past window and grace, never a parked one', async () => {
    await db.store.ingest(fates());
    const now = T0 + MIN + 4_000 + policy.windowMs + policy.graceMs + 1;
    const { rows, gauges, unaccounted } = await figuresOf(db.store, now, ['other']);
    const [hooks, other] = ledgerTotals(rows);
    assert.deepEqual(
      { ...hooks, oldestUnsettledAt: hooks!.oldestUnsettledAt },
      {
        sourceId: 'src',
        destinationId: 'hooks',
        accepted: 6,
        delivered: 1,
        filtered: 1,
        dead: 1,
        inFlight: 3,
        parked: 0,
        unaccounted: 2,
        oldestUnsettledAt: T0 + MIN + 1_000,
      },
    );
    assert.equal(other!.parked, 1);
    assert.equal(other!.unaccounted, 0, 'a parked destination waits: its window does not run');
    assert.deepEqual(
      rows.filter((r) => r.destinationId === 'hooks').map((r) => [r.bucketStart - T0, r.accepted, r.unaccounted]),
      [
        [0, 3, 0],
        [MIN, 2, 2],
        [20 * MIN, 1, 0],
      ],
    );
    assert.deepEqual(
      unaccounted.unaccounted.map((u) => [u.messageId, u.state, u.reason, Date.parse(u.windowFrom) - T0]),
      [
        ['untouched', 'delivering', 'never_attempted', MIN + 4_000],
        ['stopped', 'retrying', 'retry_stopped', MIN + 2_000],
      ].sort((a, b) => (a[3] as number) - (b[3] as number)),
    );
    assert.equal(unaccounted.total, 2);
    assert.deepEqual(gauges.map((g) => [g.destinationId, g.inFlight, g.parked, g.unaccounted]).sort(), [
      ['hooks', 3, 0, 2],
      ['other', 1, 1, 0],
    ]);
  });

  it("a caller's destinations choose the rows in the statement itself: full pages, totals of its own", async () => {
    const cutoff = ledgerCutoff(T0 + 40 * MIN, policy, []);
    const q = { from: T0 - MIN, to: T0 + 30 * MIN, bucketMs: MIN };
    const rows = await db.store.ledger({ ...q, destinationIds: ['other'] }, cutoff);
    assert.deepEqual([...new Set(rows.map((r) => r.destinationId))], ['other']);
    assert.deepEqual(await db.store.ledger({ ...q, destinationIds: [] }, cutoff), [], 'no destination, no rows');
    const hooks = await db.store.unaccounted({ limit: 1, destinationIds: ['hooks'] }, cutoff);
    assert.deepEqual([hooks.total, hooks.unaccounted.map((u) => u.destinationId)], [3, ['hooks']]);
    const other = await db.store.unaccounted({ limit: 1, destinationIds: ['other'] }, cutoff);
    assert.deepEqual([other.total, other.unaccounted.map((u) => u.messageId)], [1, ['parked']]);
    const both = await db.store.unaccounted({ limit: 50, destinationIds: ['other', 'hooks'], sourceId: 'src' }, cutoff);
    assert.equal(both.total, 4);
  });

  it('nothing is unaccounted while its window and grace run, nor at a destination resumed since then', async () => {
    const early = await figuresOf(db.store, T0 + MIN + 4_000 + policy.windowMs + policy.graceMs - 1);
    assert.deepEqual(
      early.unaccounted.unaccounted.map((u) => u.messageId),
      ['stopped'],
      'the window runs from the first attempt of the run, not the last',
    );
    const late = T0 + 40 * MIN;
    const resumed = await figuresOf(db.store, late, ['other'], late - MIN);
    assert.equal(resumed.unaccounted.total, 0);
  });

  it('a rebuild (the same records in another order and other batches) gives the same figures', async () => {
    const sql = await testDatabase();
    try {
      const rebuilt = new LogStore(sql);
      for (const entry of fates().reverse()) await rebuilt.ingest([entry]);
      const now = T0 + 25 * MIN;
      const a = await figuresOf(db.store, now, ['other']);
      const b = await figuresOf(rebuilt, now, ['other']);
      assert.deepEqual(b.rows, a.rows);
      assert.deepEqual(b.unaccounted, a.unaccounted);
      assert.deepEqual(b.gauges, a.gauges);
    } finally {
      await sql.close();
    }
  });
});

describe('delivery-log ledger queries (no database)', () => {
  const q = (text: string) => parseLedgerQuery(new URLSearchParams(text), T0);
  it('default to the last hour by the minute, and name the field of a bad input', () => {
    assert.deepEqual(q(''), { ok: true, value: { from: T0 - 60 * MIN, to: T0, bucketMs: MIN } });
    assert.deepEqual(q('bucket=1h&sourceId=web'), {
      ok: true,
      value: { from: T0 - 60 * MIN, to: T0, bucketMs: 60 * MIN, sourceId: 'web' },
    });
    for (const [text, field] of [
      ['from=soon', 'from'],
      ['to=1e3', 'to'],
      [`from=${T0}&to=${T0}`, 'from'],
      ['bucket=90s', 'bucket'],
      ['bucket=25h', 'bucket'],
      [`from=${T0 - 2 * 1_440 * MIN}&to=${T0}`, 'bucket'],
      // 1,440 buckets of 24 h would read about four years of deliveries: past the week, on from.
      [`from=${T0 - 1_440 * 24 * 60 * MIN}&to=${T0}&bucket=24h`, 'from'],
      [`from=${T0 - 7 * 24 * 60 * MIN - 1}&to=${T0}&bucket=1h`, 'from'],
      ['limit=5', 'limit'],
    ])
      assert.equal((q(text!) as { field?: string }).field, field, text);
    const page = (text: string) => parseUnaccountedQuery(new URLSearchParams(text));
    assert.equal(q(`from=${T0 - 7 * 24 * 60 * MIN}&to=${T0}&bucket=1h`).ok, true, 'a week by the hour');
    assert.deepEqual(page(''), { ok: true, value: { limit: 50 } });
    assert.equal((page('limit=201') as { field?: string }).field, 'limit');
    assert.equal((page('from=1') as { field?: string }).field, 'from');
  });
});
