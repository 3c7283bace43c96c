import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '@sluice/logging';
import { Registry } from 'prom-client';
import type { Sql } from '../src/adapters/db/database.ts';
import { Pruner } from '../src/adapters/db/pruner.ts';
import { logSize, pruneBefore } from '../src/adapters/db/retention.ts';
import { LogStore } from '../src/adapters/db/store.ts';
import { ReplayLog } from '../src/adapters/db/replay-log.ts';
import { EVICT_HIGH_WATER } from '../src/constants.ts';
import { DeliveryLogMetrics } from '../src/metrics.ts';
import { attemptEntry, eventEntry, rejectedEntry, testDatabase } from './helpers.ts';

// Retention by age (batched pruning) and by size (eviction), on the embedded database here and on
// a real PostgreSQL server in retention.integration.test.ts.

/** The real database, with the row count of every statement it ran kept aside. */
function counting(sql: Sql): { sql: Sql; counts: number[] } {
  const counts: number[] = [];
  return {
    counts,
    sql: {
      ...sql,
      query: async <T extends object>(text: string, params?: unknown[]) => {
        const rows = await sql.query<T>(text, params);
        const n = (rows[0] as { n?: unknown } | undefined)?.n;
        if (/^with gone as \(\s*delete/.test(text.trim())) counts.push(Number(n));
        return rows;
      },
    },
  };
}

const payload = 'x'.repeat(1_000);

/** `count` messages of about 1 KB each, received at `from`, `from + 1`, …, with one attempt each. */
function messages(prefix: string, from: number, count: number) {
  return Array.from({ length: count }, (_, i) => [
    eventEntry({
      sourceId: 'ret',
      messageId: `${prefix}-${from + i}`,
      receivedAt: from + i,
      event: JSON.stringify({ type: 'track', payload }),
    }),
    attemptEntry({ sourceId: 'ret', messageId: `${prefix}-${from + i}`, at: from + i + 1 }),
  ]).flat();
}

async function count(sql: Sql, table: string): Promise<number> {
  const [row] = await sql.query<{ n: number }>(`select count(*)::int as n from ${table}`);
  return Number(row!.n);
}

describe('delivery-log retention', () => {
  let sql: Sql;
  let store: LogStore;
  before(async () => {
    sql = await testDatabase();
    store = new LogStore(sql);
  });
  after(() => sql.close());

  it('prunes in batches of at most the batch size, every table by its own time column', async () => {
    await sql.query('truncate messages, deliveries, attempts, rejections, replays, dead_letters, unstored, deletions');
    await store.ingest([
      ...messages('old', 10_000, 25),
      ...messages('new', 900_000, 5),
      rejectedEntry({ sourceId: 'ret', messageId: 'rej-old', at: 20_000 }),
    ]);
    await new ReplayLog(sql).record({ at: 30_000, filter: {}, replayed: 0, matched: 0 });
    const spy = counting(sql);
    const deleted = await pruneBefore(spy.sql, 500_000, { batchRows: 4 });
    // 25 old messages and the rejected one's message row.
    assert.equal(deleted, 26);
    assert.ok(Math.max(...spy.counts) <= 4, `a batch deleted more than 4 rows: ${spy.counts.join(',')}`);
    assert.ok(spy.counts.length >= 7 + 7 + 1 + 1 + 1, `too few batches: ${spy.counts.join(',')}`);
    assert.equal(await count(sql, 'messages'), 5);
    assert.equal(await count(sql, 'deliveries'), 5);
    assert.equal(await count(sql, 'attempts'), 5);
    assert.equal(await count(sql, 'rejections'), 0);
    assert.equal(await count(sql, 'replays'), 0);
    assert.ok(await store.message('ret', 'new-900004'));
  });

  it('each batch reads its rows in order from an index on the time column: no sequential scan, no sort', async () => {
    const timed = {
      messages: 'received_at',
      deliveries: 'received_at',
      attempts: 'at',
      rejections: 'at',
      replays: 'requested_at',
    };
    for (const [table, column] of Object.entries(timed)) {
      const plan = await sql.transaction(async (tx) => {
        // An empty table's plan would read it whole: ask for the plan a large table gets.
        for (const kind of ['seqscan', 'bitmapscan', 'sort']) await tx.query(`set local enable_${kind} = off`);
        const rows = await tx.query<{ 'QUERY PLAN': string }>(
          `explain select ctid from ${table} where ${column} < now() order by ${column} limit 100`,
        );
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      });
      // Rows read in the column's order from an index: no scan of the whole table or index, no sort.
      assert.match(plan, /Index (Only )?Scan/, `${table}: ${plan}`);
      assert.doesNotMatch(plan, /Seq Scan|Sort|Bitmap/, `${table}: ${plan}`);
    }
  });

  it('over its size cap the log evicts the oldest first, with the metric and a log line, and stays within the cap', async () => {
    await sql.query('truncate messages, deliveries, attempts, rejections, replays, dead_letters, unstored, deletions');
    const registry = new Registry();
    const metrics = new DeliveryLogMetrics(registry);
    const lines: string[] = [];
    const logger = createLogger({
      name: 'retention-test',
      level: 'info',
      destination: new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    });
    const empty = await logSize(sql);
    const cap = empty + 4 * 1024 * 1024;
    const pruner = new Pruner({
      sql,
      now: () => 1_000_000_000,
      metrics,
      logger,
      retentionMs: () => 1_000_000_000,
      intervalMs: 60_000,
      maxSizeBytes: () => cap,
    });
    let next = 0;
    let evictions = 0;
    let largest = 0;
    for (let round = 0; round < 40; round++) {
      await store.ingest(messages('m', next, 100));
      next += 100;
      if ((await pruner.checkSize()) > 0) evictions += 1;
      largest = Math.max(largest, await logSize(sql));
    }
    assert.ok(largest <= cap, `grew to ${largest} bytes over a cap of ${cap}`);
    assert.ok(evictions >= 2, `${evictions} evictions`);
    const evicted = (await registry.getSingleMetric('sluice_delivery_log_evicted_total')!.get()).values[0]!.value;
    const kept = await count(sql, 'messages');
    assert.equal(evicted + kept, next, 'every message is either kept or counted as evicted');
    // The oldest went first: what is kept is the newest, without a gap.
    const [range] = await sql.query<{ lo: string }>(
      "select min(replace(message_id, 'm-', '')::int) as lo from messages",
    );
    assert.equal(Number(range!.lo), next - kept);
    assert.ok(await store.message('ret', `m-${next - 1}`));
    assert.equal(await store.message('ret', 'm-0'), undefined);
    assert.ok(lines.some((l) => l.includes('evicted the oldest messages')));
    const size = (await registry.getSingleMetric('sluice_delivery_log_size_bytes')!.get()).values[0]!.value;
    assert.ok(size > cap * EVICT_HIGH_WATER * 0.5 && size <= cap, `size gauge ${size}`);
  });

  it('without a cap nothing is evicted', async () => {
    const metrics = new DeliveryLogMetrics(new Registry());
    const pruner = new Pruner({
      sql,
      now: () => 0,
      metrics,
      logger: createLogger({ name: 'retention-test', level: 'error' }),
      retentionMs: () => 0,
      intervalMs: 60_000,
      maxSizeBytes: () => undefined,
    });
    const before = await count(sql, 'messages');
    assert.equal(await pruner.checkSize(), 0);
    assert.equal(await count(sql, 'messages'), before);
  });
});
