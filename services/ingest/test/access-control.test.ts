import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RateLimiter, TokenBucket } from '../src/domain/token-bucket.ts';
import { tokenMatches, writeKeyFromAuthorization, WriteKeyIndex } from '../src/domain/write-keys.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');

test('write key from Basic auth: with or without the colon, password ignored', () => {
  assert.equal(writeKeyFromAuthorization(`Basic ${b64('key1:')}`), 'key1');
  assert.equal(writeKeyFromAuthorization(`Basic ${b64('key1')}`), 'key1');
  assert.equal(writeKeyFromAuthorization(`basic ${b64('key1:pw')}`), 'key1');
  assert.equal(writeKeyFromAuthorization(`Bearer ${b64('key1:')}`), undefined);
  assert.equal(writeKeyFromAuthorization(`Basic ${b64(':')}`), undefined);
  assert.equal(writeKeyFromAuthorization(undefined), undefined);
});

test('write key index: every key of a source, unknown and missing keys', () => {
  const index = new WriteKeyIndex([
    { id: 'a', name: 'A', writeKeys: ['k1', 'k2'] },
    { id: 'b', name: 'B', writeKeys: ['k3'] },
  ]);
  assert.equal(index.sourceFor('k1'), 'a');
  assert.equal(index.sourceFor('k2'), 'a');
  assert.equal(index.sourceFor('k3'), 'b');
  assert.equal(index.sourceFor('k4'), undefined);
  assert.equal(index.sourceFor(''), undefined);
  assert.equal(index.sourceFor(undefined), undefined);
});

test('admin token comparison', () => {
  assert.equal(tokenMatches('t0ken', 't0ken'), true);
  assert.equal(tokenMatches('t0ken', 't0ke'), false);
  assert.equal(tokenMatches('t0ken', undefined), false);
});

test('token bucket: burst, refill, Retry-After', () => {
  const bucket = new TokenBucket(10, 20, 0);
  assert.deepEqual(bucket.take(20, 0), { ok: true });
  assert.deepEqual(bucket.take(5, 0), { ok: false, retryAfterSeconds: 1 });
  assert.deepEqual(bucket.take(5, 500), { ok: true });
  assert.deepEqual(bucket.take(20, 500), { ok: false, retryAfterSeconds: 2 });
  // A batch larger than the burst passes once the bucket is full, and is charged in full.
  assert.deepEqual(bucket.take(100, 10_000), { ok: true });
  assert.deepEqual(bucket.take(1, 10_000), { ok: false, retryAfterSeconds: 9 });
});

test('a 2,000-call batch on a 10 calls/s source pays for all 2,000: nothing more for 200 s', () => {
  const bucket = new TokenBucket(10, 10, 0);
  assert.deepEqual(bucket.take(2_000, 0), { ok: true });
  const refused = bucket.take(1, 1_000);
  assert.ok(!refused.ok && refused.retryAfterSeconds >= 199, JSON.stringify(refused));
  let admitted = 0;
  // Requests of 2,000 calls every second for ten minutes: the average stays at 10 calls/s.
  for (let t = 1_000; t <= 600_000; t += 1_000) if (bucket.take(2_000, t).ok) admitted += 2_000;
  assert.ok(admitted + 2_000 <= 10 * 600 + 2_000 + 10, `admitted ${admitted}`);
});

test('rate limiter: per source, off without a limit, rebuilt when the limit changes', () => {
  const limiter = new RateLimiter();
  assert.deepEqual(limiter.take('a', undefined, 1e6, 0), { ok: true });
  assert.deepEqual(limiter.take('a', { perSecond: 1, burst: 2 }, 2, 0), { ok: true });
  assert.equal(limiter.take('a', { perSecond: 1, burst: 2 }, 1, 0).ok, false);
  assert.equal(limiter.take('b', { perSecond: 1, burst: 2 }, 1, 0).ok, true);
  assert.equal(limiter.take('a', { perSecond: 5, burst: 5 }, 1, 0).ok, true);
});
