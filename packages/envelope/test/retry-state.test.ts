import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  recordKey,
  RetryHeadersError,
  retryStateFromHeaders,
  retryStateToHeaders,
  type RetryState,
} from '@sluice/envelope';

describe('retry state headers', () => {
  it('round-trips through Kafka-style Buffer headers', () => {
    const state: RetryState = {
      messageId: 'm-1',
      sourceId: 's-1',
      destinationId: 'd-1',
      eventType: 'track',
      endpoints: ['https://a.example/hook', 'https://b.example/hook'],
      firstAttemptAt: 1_700_000_000_000,
      attempts: 3,
      dueAt: 1_700_000_030_000,
      retryAfterMs: 2_000,
      lastError: 'http_503',
      history: [
        {
          attempt: 1,
          endpoint: 'https://a.example/hook',
          at: 1_700_000_000_000,
          outcome: 'retryable',
          status: 503,
          error: 'http_503',
          latencyMs: 12,
        },
      ],
      receivedAt: '2026-11-21T23:34:15.210Z',
    };
    const asBuffers = Object.fromEntries(
      Object.entries(retryStateToHeaders(state)).map(([k, v]) => [k, Buffer.from(v)]),
    );
    assert.deepEqual(retryStateFromHeaders(asBuffers), state);
  });

  it('names the missing header', () => {
    assert.throws(
      () => retryStateFromHeaders({ 'sluice-message-id': 'm' }),
      (e: unknown) => e instanceof RetryHeadersError && /sluice-first-attempt-at/.test(e.message),
    );
  });

  it('reads the attempt history field by field: unknown fields dropped, anything else in it refused', () => {
    const base = retryStateToHeaders({
      messageId: 'm',
      sourceId: 's',
      destinationId: 'd',
      eventType: 'track',
      endpoints: [],
      firstAttemptAt: 1,
      attempts: 1,
      history: [],
    });
    const record = { attempt: 1, endpoint: 'https://a.example/hook', at: 5, outcome: 'retryable', latencyMs: 3 };
    const extra = { ...record, status: 500, error: 'http_500', unknown: { x: 1 } };
    const read = retryStateFromHeaders({
      ...base,
      'sluice-history': JSON.stringify([record]).replace('}]', `,"deep":${'['.repeat(10_000)}${']'.repeat(10_000)}}]`),
    });
    assert.deepEqual(read.history, [record]);
    assert.deepEqual(retryStateFromHeaders({ ...base, 'sluice-history': JSON.stringify([extra]) }).history, [
      { ...record, status: 500, error: 'http_500' },
    ]);
    const refused = [
      '{"attempt":1}',
      '"text"',
      '[1]',
      '[null]',
      JSON.stringify([{ ...record, outcome: 'maybe' }]),
      JSON.stringify([{ ...record, at: 'noon' }]),
      JSON.stringify([{ ...record, status: '500' }]),
    ];
    for (const history of refused) {
      assert.throws(
        () => retryStateFromHeaders({ ...base, 'sluice-history': history }),
        (e: unknown) => e instanceof RetryHeadersError && /sluice-history/.test(e.message),
        history,
      );
    }
  });

  it('keys records by source and user (docs/reference/overview.md)', () => {
    assert.equal(recordKey({ sourceId: 's', userId: 'u' }), 's:u');
    assert.equal(recordKey({ sourceId: 's', userId: null, anonymousId: 'a' }), 's:a');
  });
});
