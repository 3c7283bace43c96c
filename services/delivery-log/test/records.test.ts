import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readRecord } from '../src/domain/records.ts';
import { TEST_TOPICS, topicRecord } from './helpers.ts';

const attempt = (over: Record<string, unknown>) =>
  topicRecord(
    TEST_TOPICS.attempts,
    JSON.stringify({
      messageId: 'm1',
      sourceId: 'src',
      destinationId: 'hooks',
      endpoint: 'https://example.com/h',
      attempt: 1,
      latencyMs: 3,
      at: '2026-01-01T00:00:00.000Z',
      outcome: 'retryable',
      status: 503,
      ...over,
    }),
  );

describe('delivery-log: reading records keeps out what the database cannot keep (no database)', () => {
  it('a receive time outside 1970..9999 gives way to the record time', () => {
    for (const receivedAt of [
      '-010000-01-01T00:00:00.000Z',
      '+275760-09-13T00:00:00.000Z',
      '1969-12-31T23:59:59.000Z',
    ]) {
      const read = readRecord(
        topicRecord(TEST_TOPICS.events, JSON.stringify({ sourceId: 's', messageId: 'm', receivedAt })),
        TEST_TOPICS,
      );
      assert.ok(read.ok && read.entry.kind === 'event');
      assert.equal(read.entry.receivedAt, 1_700_000_000_000, receivedAt);
    }
  });

  it('an attempt number past a 32-bit integer makes the attempt unreadable; such a status is dropped', () => {
    assert.equal(readRecord(attempt({ attempt: 2 ** 40 }), TEST_TOPICS).ok, false);
    assert.equal(readRecord(attempt({ attempt: 1.5 }), TEST_TOPICS).ok, false);
    const read = readRecord(attempt({ status: 1e12 }), TEST_TOPICS);
    assert.ok(read.ok && read.entry.kind === 'attempt');
    assert.equal(read.entry.status, undefined);
    const late = readRecord(attempt({ at: '+100000-01-01T00:00:00.000Z' }), TEST_TOPICS);
    assert.equal(late.ok, false, 'an attempt time past 9999 is not a time the log keeps');
  });

  it("an event's and a rejected body's userId are read for deletions", () => {
    const event = readRecord(
      topicRecord(TEST_TOPICS.events, JSON.stringify({ sourceId: 's', messageId: 'm', userId: 'u1' })),
      TEST_TOPICS,
    );
    assert.ok(event.ok && event.entry.kind === 'event' && event.entry.userId === 'u1');
    const rejected = readRecord(topicRecord(TEST_TOPICS.rejected, '{"userId":"u2","messageId":"x"}'), TEST_TOPICS);
    assert.ok(rejected.ok && rejected.entry.kind === 'rejected' && rejected.entry.userId === 'u2');
  });

  it("a destination's filtered record reads as filtered (no attempt); one without its ids or time is unreadable", () => {
    const read = readRecord(
      attempt({ outcome: 'filtered', attempt: 0, endpoint: '', latencyMs: 0, status: undefined }),
      TEST_TOPICS,
    );
    assert.ok(read.ok && read.entry.kind === 'filtered');
    assert.deepEqual(
      [read.entry.destinationId, read.entry.messageId, read.entry.at],
      ['hooks', 'm1', Date.parse('2026-01-01T00:00:00.000Z')],
    );
    assert.equal(readRecord(attempt({ outcome: 'filtered', destinationId: undefined }), TEST_TOPICS).ok, false);
    assert.equal(readRecord(attempt({ outcome: 'filtered', at: 'soon' }), TEST_TOPICS).ok, false);
  });
});
