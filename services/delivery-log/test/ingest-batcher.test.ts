import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ConsumedRecord } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { testAttempt } from '@sluice/testkit';
import { Registry } from 'prom-client';
import type { Sql } from '../src/adapters/db/database.ts';
import { IngestBatcher } from '../src/adapters/kafka/ingest-batcher.ts';
import { ReplayLog } from '../src/adapters/db/replay-log.ts';
import { LogStore } from '../src/adapters/db/store.ts';
import { DeliveryLogMetrics } from '../src/metrics.ts';
import { testDatabase, topicRecord } from './helpers.ts';

const topics = { events: 'events', attempts: 'attempts', deadLetter: 'dead-letter', rejected: 'rejected' };

const newBatcher = (sql: Sql) =>
  new IngestBatcher({
    store: new LogStore(sql),
    replayLog: new ReplayLog(sql),
    topics,
    metrics: new DeliveryLogMetrics(new Registry()),
    logger: createLogger({ name: 'batcher-test', level: 'error' }),
    keepAfter: () => 0,
    route: () => ['hooks'],
    lanes: 4,
  });

describe('delivery-log ingest batcher', () => {
  let sql: Sql;
  before(async () => {
    sql = await testDatabase();
  });
  after(() => sql.close());

  it('runs its lanes side by side without splitting a message: every delivery keeps all its attempts', async () => {
    const batcher = newBatcher(sql);
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
    const attempt = (i: number, n: number, status: number) =>
      record(
        topics.attempts,
        testAttempt({
          messageId: `m-${i}`,
          sourceId: 'lanes',
          attempt: n,
          status,
          at: new Date(base + n * 1_000).toISOString(),
        }),
      );
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
  it('keeps texts with U+0000 or a lone surrogate (as U+FFFD) instead of failing the batch', async () => {
    const batcher = newBatcher(sql);
    const at = Date.parse('2026-01-01T00:00:00Z');
    const record = (topic: string, value: string | Buffer, offset: number, headers = {}): ConsumedRecord => ({
      topic,
      partition: 0,
      offset: String(offset),
      key: null,
      value: Buffer.from(value),
      headers,
      timestamp: at,
    });
    const written = [
      batcher.handle(
        record(
          topics.events,
          '{"sourceId":"text","messageId":"m\\u0000","type":"track","event":"a\\u0000b",' +
            '"receivedAt":"2026-01-01T00:00:00Z",' +
            '"properties":{"lone":"\\ud800","pair":"\\ud83d\\ude00","escaped":"\\\\u0000"}}',
          1,
        ),
      ),
      batcher.handle(
        record(
          topics.attempts,
          JSON.stringify({
            messageId: 'm\u0000',
            sourceId: 'text',
            destinationId: 'hooks',
            eventType: 'track',
            endpoint: 'http://127.0.0.1:9/a',
            attempt: 1,
            outcome: 'retryable',
            status: 500,
            error: 'broken \udc00 text',
            latencyMs: 5,
            at: '2026-01-01T00:00:01Z',
          }),
          2,
        ),
      ),
      batcher.handle(
        record(topics.rejected, Buffer.from([0x7b, 0x00, 0x7d]), 3, { 'sluice-reject-code': 'invalid_json' }),
      ),
    ];
    await Promise.all(written);
    const store = new LogStore(sql);
    const m = await store.message('text', 'm\ufffd');
    assert.ok(m, 'the message is kept under its id with U+FFFD');
    assert.deepEqual(m.event, {
      sourceId: 'text',
      messageId: 'm\ufffd',
      type: 'track',
      event: 'a\ufffdb',
      receivedAt: '2026-01-01T00:00:00Z',
      properties: { lone: '\ufffd', pair: '\ud83d\ude00', escaped: '\\u0000' },
    });
    assert.deepEqual(
      m.deliveries.map((d) => [d.state, d.attempts, d.lastError]),
      [['retrying', 1, 'broken \ufffd text']],
    );
    const [rejected] = await sql.query<{ value: string }>(
      "select value from rejections where message_id like 'rejected:%'",
    );
    assert.equal(rejected!.value, '{\ufffd}');
  });

  it('counts events kept as text by reason, and skips a framed event when no schema registry is configured', async () => {
    const registry = new Registry();
    const metrics = new DeliveryLogMetrics(registry);
    const batcher = new IngestBatcher({
      store: new LogStore(sql),
      replayLog: new ReplayLog(sql),
      topics,
      metrics,
      logger: createLogger({ name: 'batcher-test', level: 'error' }),
      keepAfter: () => 0,
      route: () => ['hooks'],
    });
    await Promise.all([
      batcher.handle(topicRecord(topics.events, '{"sourceId":"counted","messageId":"odd","n":1e-16384}')),
      batcher.handle(topicRecord(topics.events, '{"sourceId":"counted","messageId":"good","n":1}')),
      batcher.handle(
        topicRecord(topics.events, Buffer.concat([Buffer.from([0, 0, 0, 0, 1]), Buffer.from('{"sourceId":"x"}')])),
      ),
    ]);
    const text = await registry.metrics();
    assert.match(text, /sluice_delivery_log_events_kept_as_text_total\{reason="number_out_of_range"\} 1/);
    assert.match(text, /sluice_delivery_log_skipped_total\{topic="events"\} 1/);
    assert.equal((await new LogStore(sql).message('counted', 'odd'))!.eventNote, 'number_out_of_range');
  });
});
