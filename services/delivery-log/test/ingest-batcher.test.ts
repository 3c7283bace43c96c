import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AttemptEvent } from '@sluice/envelope';
import type { ConsumedRecord } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { Registry } from 'prom-client';
import type { Sql } from '../src/adapters/database.ts';
import { IngestBatcher } from '../src/adapters/ingest-batcher.ts';
import { LogStore } from '../src/adapters/store.ts';
import { DeliveryLogMetrics } from '../src/metrics.ts';
import { testDatabase } from './helpers.ts';

const topics = { events: 'events', attempts: 'attempts', deadLetter: 'dead-letter', rejected: 'rejected' };

describe('delivery-log ingest batcher', () => {
  let sql: Sql;
  before(async () => {
    sql = await testDatabase();
  });
  after(() => sql.close());

  it('runs its lanes side by side without splitting a message: every delivery keeps all its attempts', async () => {
    const batcher = new IngestBatcher({
      store: new LogStore(sql),
      topics,
      metrics: new DeliveryLogMetrics(new Registry()),
      logger: createLogger({ name: 'batcher-test', level: 'error' }),
      keepAfter: () => 0,
      route: () => ['hooks'],
      lanes: 4,
    });
    const MESSAGES = 400;
    const base = Date.parse('2026-01-01T00:00:00Z');
    let offset = 0;
    const record = (topic: string, value: object): ConsumedRecord => ({
      topic,
      partition: 0,
      offset: String(offset++),
      key: null,
      value: Buffer.from(JSON.stringify(value)),
      headers: {},
      timestamp: base,
    });
    const event = (i: number) =>
      record(topics.events, {
        sourceId: 'lanes',
        messageId: `m-${i}`,
        type: 'track',
        event: 'Bought',
        receivedAt: new Date(base).toISOString(),
      });
    const attempt = (i: number, n: number, status: number) => {
      const a: AttemptEvent = {
        messageId: `m-${i}`,
        sourceId: 'lanes',
        destinationId: 'hooks',
        eventType: 'track',
        endpoint: 'http://127.0.0.1:9/a',
        attempt: n,
        outcome: status === 200 ? 'success' : 'retryable',
        status,
        latencyMs: 5,
        at: new Date(base + n * 1_000).toISOString(),
      };
      return record(topics.attempts, a);
    };
    // Each round of records about every message reaches the batcher while the rounds before it
    // are still being written, so each message is in several transactions that overlap in time.
    const rounds = [
      (i: number) => event(i),
      (i: number) => attempt(i, 1, 503),
      (i: number) => attempt(i, 2, 503),
      (i: number) => attempt(i, 3, 503),
      (i: number) => attempt(i, 4, 200),
    ];
    const written: Promise<void>[] = [];
    for (const round of rounds) {
      for (let i = 0; i < MESSAGES; i++) written.push(batcher.handle(round(i)));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await Promise.all(written);
    const rows = await sql.query<{ state: string; attempts: number; n: number }>(
      `select state, attempts, count(*)::int as n from deliveries where source_id = 'lanes' group by state, attempts`,
    );
    assert.deepEqual(
      rows.map((r) => ({ ...r })),
      [{ state: 'delivered', attempts: 4, n: MESSAGES }],
    );
  });
});
