import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TokenBucket } from '../src/token-bucket.ts';

test('burst, refill, and the wait until enough tokens', () => {
  const bucket = new TokenBucket(10, 20, 0);
  assert.deepEqual(bucket.take(20, 0), { ok: true });
  assert.deepEqual(bucket.take(5, 0), { ok: false, waitMs: 500 });
  assert.deepEqual(bucket.take(5, 500), { ok: true });
  assert.deepEqual(bucket.take(20, 500), { ok: false, waitMs: 2_000 });
  // A batch larger than the burst passes once the bucket is full, and is charged in full.
  assert.deepEqual(bucket.take(100, 10_000), { ok: true });
  assert.deepEqual(bucket.take(1, 10_000), { ok: false, waitMs: 8_100 });
});

test('a 2,000-call batch on a 10 calls/s source pays for all 2,000: nothing more for 200 s', () => {
  const bucket = new TokenBucket(10, 10, 0);
  assert.deepEqual(bucket.take(2_000, 0), { ok: true });
  const refused = bucket.take(1, 1_000);
  assert.ok(!refused.ok && refused.waitMs >= 198_000, JSON.stringify(refused));
  let admitted = 0;
  // Requests of 2,000 calls every second for ten minutes: the average stays at 10 calls/s.
  for (let t = 1_000; t <= 600_000; t += 1_000) if (bucket.take(2_000, t).ok) admitted += 2_000;
  assert.ok(admitted + 2_000 <= 10 * 600 + 2_000 + 10, `admitted ${admitted}`);
});

test('a refund gives tokens back; a new rate keeps the tokens there, capped at the new burst', () => {
  const bucket = new TokenBucket(10, 10, 0);
  assert.deepEqual(bucket.take(10, 0), { ok: true });
  bucket.refund(1);
  assert.equal(bucket.shortfallMs(1, 0), 0);
  assert.deepEqual(bucket.take(1, 0), { ok: true });
  bucket.setRate(1, 1);
  assert.equal(bucket.shortfallMs(1, 0), 1_000);
  assert.equal(bucket.shortfallMs(1, 60_000), 0);
  assert.deepEqual(bucket.take(1, 60_000), { ok: true });
  assert.equal(bucket.shortfallMs(1, 60_000), 1_000);
});
