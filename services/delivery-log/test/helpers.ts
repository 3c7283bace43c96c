import type { ConsumedRecord } from '@sluice/kafka';
import { after, before } from 'node:test';
import { openDatabase, type Sql } from '../src/adapters/db/database.ts';
import { LogStore } from '../src/adapters/db/store.ts';
import { migrate } from '../src/adapters/db/migrations.ts';
import type { AttemptEntry, DeadEntry, EventEntry, RejectedEntry } from '../src/domain/records.ts';

/**
 * The database the tests run against: the embedded one by default, or the PostgreSQL server named
 * by `DELIVERY_LOG_TEST_DATABASE_URL` (each call gets its own schema there, dropped by `close`).
 */
export async function testDatabase(): Promise<Sql> {
  const url = process.env.DELIVERY_LOG_TEST_DATABASE_URL;
  if (url === undefined) {
    const sql = await openDatabase({});
    await migrate(sql);
    return sql;
  }
  const schema = await testSchema(url);
  const sql = await openDatabase({ url: schema.url });
  await migrate(sql);
  return {
    ...sql,
    close: async () => {
      await sql.query(`drop schema ${schema.name} cascade`);
      await sql.close();
    },
  };
}

/**
 * A schema of its own on the PostgreSQL server at `url`: its name, and the URL whose connections
 * use it (several replicas of the log can share it). The caller drops it.
 */
export async function testSchema(url: string): Promise<{ name: string; url: string }> {
  const name = `t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = await openDatabase({ url });
  await admin.query(`create schema ${name}`);
  await admin.close();
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${name}`);
  return { name, url: u.toString() };
}

/**
 * A store over its own test database for one `describe`: opened before its tests, closed after.
 * `sql` and `store` are set once `before` ran.
 */
export function storeFixture(): { sql: Sql; store: LogStore } {
  const fixture = {} as { sql: Sql; store: LogStore };
  before(async () => {
    fixture.sql = await testDatabase();
    fixture.store = new LogStore(fixture.sql);
  });
  after(() => fixture.sql.close());
  return fixture;
}

let offset = 0;
const position = (topic = 'attempts') => ({ topic, partition: 0, offset: String(offset++) });

export function eventEntry(over: Partial<EventEntry> = {}): EventEntry {
  const messageId = over.messageId ?? 'm1';
  const envelope = {
    sourceId: 'src',
    messageId,
    type: 'track',
    event: 'Clicked',
    timestamp: '2026-01-01T00:00:00.000Z',
  };
  return {
    kind: 'event',
    sourceId: 'src',
    messageId,
    eventType: 'track',
    receivedAt: 1_000,
    event: JSON.stringify(envelope),
    envelope,
    destinationIds: ['hooks'],
    ...over,
  };
}

export function attemptEntry(over: Partial<AttemptEntry> = {}): AttemptEntry {
  return {
    kind: 'attempt',
    position: position(),
    sourceId: 'src',
    messageId: 'm1',
    destinationId: 'hooks',
    eventType: 'track',
    endpoint: 'http://127.0.0.1:9/hook',
    attempt: 1,
    outcome: 'retryable',
    status: 503,
    error: 'http_503',
    latencyMs: 12,
    at: 2_000,
    ...over,
  };
}

export function deadEntry(over: Partial<DeadEntry> = {}): DeadEntry {
  return {
    kind: 'dead',
    position: position('dead-letter'),
    sourceId: 'src',
    messageId: 'm1',
    destinationId: 'hooks',
    eventType: 'track',
    reason: 'permanent_failure',
    at: 3_000,
    ...over,
  };
}

export function rejectedEntry(over: Partial<RejectedEntry> = {}): RejectedEntry {
  return {
    kind: 'rejected',
    position: position('rejected'),
    sourceId: 'src',
    messageId: 'bad-1',
    code: 'invalid_call',
    message: 'track needs event',
    origin: 'ingest',
    at: 1_500,
    value: '{"type":"track"}',
    ...over,
  };
}

/** The topics of the records `topicRecord` makes. */
export const TEST_TOPICS = { events: 'events', attempts: 'attempts', deadLetter: 'dead-letter', rejected: 'rejected' };

let recordOffset = 0;
/** A record as the consumer hands it to the log, on one of `TEST_TOPICS`. */
export function topicRecord(
  topic: string,
  value: string | Buffer,
  headers: Record<string, string> = {},
): ConsumedRecord {
  return {
    topic,
    partition: 0,
    offset: String(recordOffset++),
    key: null,
    value: typeof value === 'string' ? Buffer.from(value) : value,
    headers,
    timestamp: 1_700_000_000_000,
  };
}
