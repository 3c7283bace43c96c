import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { createLogger } from '@sluice/logging';
import { TimeoutLog } from '../src/transport/timeout-log.ts';
import { LogRateLimiter } from '../src/service/log-rate-limit.ts';

describe('LogRateLimiter (injected clock)', () => {
  it('writes the first line of a key, holds back the rest of the interval, and reports how many', () => {
    let now = 1_000;
    const limiter = new LogRateLimiter({ intervalMs: 10_000, now: () => now });
    assert.deepEqual(limiter.admit('a'), { write: true, suppressed: 0 });
    for (let i = 0; i < 99; i++) {
      now += 100;
      assert.deepEqual(limiter.admit('a'), { write: false });
    }
    now = 1_000 + 9_999;
    assert.deepEqual(limiter.admit('a'), { write: false });
    now = 1_000 + 10_000;
    assert.deepEqual(limiter.admit('a'), { write: true, suppressed: 100 });
    assert.deepEqual(limiter.admit('a'), { write: false });
  });

  it('keys are limited independently', () => {
    const limiter = new LogRateLimiter({ intervalMs: 10_000, now: () => 0 });
    assert.equal(limiter.admit('a').write, true);
    assert.equal(limiter.admit('b').write, true);
    assert.equal(limiter.admit('a').write, false);
    assert.equal(limiter.admit('b').write, false);
  });

  it('remembers at most maxKeys keys, forgetting the one written longest ago', () => {
    let now = 0;
    const limiter = new LogRateLimiter({ intervalMs: 10_000, maxKeys: 3, now: () => now });
    for (const k of ['a', 'b', 'c', 'd']) {
      now++;
      limiter.admit(k);
    }
    assert.equal(limiter.size, 3);
    assert.equal(limiter.admit('a').write, true, 'a was forgotten');
    assert.equal(limiter.admit('d').write, false, 'd is still remembered');
  });
});

describe('TimeoutLog', () => {
  it('writes one warn line per endpoint per interval, with the redacted URL, message id, timeout and suppressed count', () => {
    const lines: Record<string, unknown>[] = [];
    const destination = new Writable({ write: (chunk, _enc, cb) => (lines.push(JSON.parse(String(chunk))), cb()) });
    let now = 0;
    const log = new TimeoutLog({
      logger: createLogger({ name: 't', level: 'info', destination }),
      now: () => now,
      intervalMs: 10_000,
    });
    const dead = { destinationId: 'd1', url: 'https://u:p@dead.example/hook?key=s3cret', timeoutMs: 5_000 };
    for (let i = 0; i < 500; i++) {
      now += 50; // 500 timeouts over 25 s
      log.timedOut({ ...dead, messageId: `m-${i}` });
    }
    log.timedOut({ destinationId: 'd1', url: 'https://other.example/hook', messageId: 'o-1', timeoutMs: 5_000 });
    assert.equal(lines.length, 4, 'three lines for the dead endpoint in 25 s, one for the other');
    const first = lines[0]!;
    assert.equal(first.level, 40);
    assert.equal(first.msg, 'webhook request timed out');
    assert.equal(first.endpoint, 'https://***@dead.example/hook?***');
    assert.equal(first.destinationId, 'd1');
    assert.equal(first.messageId, 'm-0');
    assert.equal(first.timeoutMs, 5_000);
    assert.equal(first.suppressed, 0);
    assert.equal(lines[1]!.suppressed, 199);
    assert.equal(lines[2]!.suppressed, 199);
    assert.ok(!JSON.stringify(lines).includes('s3cret'));
    assert.equal(lines[3]!.endpoint, 'https://other.example/hook');
  });
});
