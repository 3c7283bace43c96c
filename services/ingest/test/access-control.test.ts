import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RateLimiter } from '../src/domain/rate-limiter.ts';
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

test('rate limiter: per source, off without a limit, rebuilt when the limit changes', () => {
  const limiter = new RateLimiter();
  assert.deepEqual(limiter.take('a', undefined, 1e6, 0), { ok: true });
  assert.deepEqual(limiter.take('a', { perSecond: 1, burst: 2 }, 2, 0), { ok: true });
  assert.deepEqual(limiter.take('a', { perSecond: 1, burst: 2 }, 1, 0), { ok: false, retryAfterSeconds: 1 });
  assert.deepEqual(limiter.take('a', { perSecond: 1, burst: 2 }, 2, 500), { ok: false, retryAfterSeconds: 2 });
  assert.equal(limiter.take('b', { perSecond: 1, burst: 2 }, 1, 0).ok, true);
  assert.equal(limiter.take('a', { perSecond: 5, burst: 5 }, 1, 0).ok, true);
});
