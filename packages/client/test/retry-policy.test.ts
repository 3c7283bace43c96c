import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyAttempt, parseRetryAfter } from '../src/retry-policy.ts';

const now = Date.parse('2026-11-21T23:00:00.000Z');

describe('classifyAttempt', () => {
  const table: Array<[number | undefined, string]> = [
    [undefined, 'retry'],
    [200, 'success'],
    [202, 'success'],
    [204, 'success'],
    [301, 'fail'],
    [400, 'fail'],
    [401, 'fail'],
    [403, 'fail'],
    [404, 'fail'],
    [408, 'fail'],
    [413, 'fail'],
    [415, 'fail'],
    [429, 'retry'],
    [500, 'retry'],
    [502, 'retry'],
    [503, 'retry'],
    [504, 'retry'],
  ];
  for (const [status, kind] of table) {
    it(`${status ?? 'network error'} → ${kind}`, () =>
      assert.equal(classifyAttempt(status, undefined, now).kind, kind));
  }

  it('carries Retry-After on 429 and 503', () => {
    assert.deepEqual(classifyAttempt(429, '2', now), { kind: 'retry', retryAfterMs: 2_000 });
    assert.deepEqual(classifyAttempt(503, '0', now), { kind: 'retry', retryAfterMs: 0 });
  });
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates, caps at 60 s, ignores junk', () => {
    assert.equal(parseRetryAfter(undefined, now), undefined);
    assert.equal(parseRetryAfter('', now), undefined);
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter('-1', now), undefined);
    assert.equal(parseRetryAfter(' 3 ', now), 3_000);
    assert.equal(parseRetryAfter('3600', now), 60_000);
    assert.equal(parseRetryAfter('Sat, 21 Nov 2026 23:00:07 GMT', now), 7_000);
    assert.equal(parseRetryAfter('Sat, 21 Nov 2026 22:00:00 GMT', now), 0);
  });
});
