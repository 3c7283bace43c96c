import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeKeyDigest } from '@sluice/secret-keyring';
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

test('write key index: every key of a source, the file’s and the runtime digests; unknown and missing keys', () => {
  const runtime = {
    id: 'r',
    name: 'R',
    tenant: 'default',
    writeKeys: [],
    writeKeyDigests: [writeKeyDigest('sk_minted')],
  };
  const index = new WriteKeyIndex([
    { id: 'a', name: 'A', tenant: 'default', writeKeys: ['k1', 'k2'] },
    { id: 'b', name: 'B', tenant: 'default', writeKeys: ['k3'], rateLimit: { perSecond: 1, burst: 1 } },
    runtime,
  ]);
  const idOf = (key: string | undefined) => index.sourceFor(key)?.id;
  assert.equal(idOf('k1'), 'a');
  assert.equal(idOf('k2'), 'a');
  assert.equal(idOf('k3'), 'b');
  assert.deepEqual(index.sourceFor('k3')!.rateLimit, { perSecond: 1, burst: 1 }, 'the source itself: no second lookup');
  assert.equal(index.sourceFor('sk_minted'), runtime);
  assert.equal(idOf(writeKeyDigest('sk_minted')), undefined, 'a digest is not a key');
  assert.equal(idOf('k4'), undefined);
  assert.equal(idOf(''), undefined);
  assert.equal(idOf(undefined), undefined);
});

test('write key index: a lookup costs the same whatever the number of keys', () => {
  const sources = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      id: `s${i}`,
      name: '',
      tenant: 'default',
      writeKeys: [],
      writeKeyDigests: [writeKeyDigest(`key-${i}`)],
    }));
  const timed = (index: WriteKeyIndex) => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < 20_000; i++) index.sourceFor(`key-${i % 10}`);
    return Number(process.hrtime.bigint() - start);
  };
  const [small, large] = [new WriteKeyIndex(sources(10)), new WriteKeyIndex(sources(100_000))];
  timed(small);
  timed(large);
  const ratio = Math.min(...[1, 2, 3].map(() => timed(large))) / Math.min(...[1, 2, 3].map(() => timed(small)));
  // A pass over every key would make this about 10,000; cache misses and a busy machine stay far below 50.
  assert.ok(ratio < 50, `100,000 keys cost ${ratio.toFixed(1)}× 10 keys per lookup`);
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
