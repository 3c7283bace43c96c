import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AuthFailures } from '../src/adapters/http/auth-failures.ts';
import { AUTH_FAILURES, LIMITED_HELD } from '../src/constants.ts';

describe('failed authentications per client address', () => {
  it('lets a burst through, then holds the address until its bucket refills; other addresses are not held', () => {
    let now = 0;
    const failures = new AuthFailures(() => now);
    for (let i = 0; i < AUTH_FAILURES.burst; i++) {
      assert.equal(failures.waitMs('10.0.0.1'), 0, `failure ${i + 1} is answered 401`);
      failures.failed('10.0.0.1');
    }
    const wait = failures.waitMs('10.0.0.1');
    assert.ok(wait > 0 && wait <= 1_000 / AUTH_FAILURES.perSecond, String(wait));
    assert.equal(failures.waitMs('10.0.0.2'), 0);
    now += wait;
    assert.equal(failures.waitMs('10.0.0.1'), 0, 'one more try once refilled');
    failures.failed('10.0.0.1');
    assert.ok(failures.waitMs('10.0.0.1') > 0);
  });

  it('holds at most LIMITED_HELD 429s of one address, and of all, at once; a place given back is free again', () => {
    const failures = new AuthFailures(() => 0);
    for (let i = 0; i < LIMITED_HELD.perClient; i++) assert.ok(failures.hold('10.0.0.1'), `held ${i + 1}`);
    assert.equal(failures.hold('10.0.0.1'), false, 'one more of the address is sent at once');
    assert.ok(failures.hold('10.0.0.2'), 'another address has places of its own');
    failures.release('10.0.0.1');
    assert.ok(failures.hold('10.0.0.1'), 'the place given back');
    failures.release('10.0.0.9');
    // In all: fill every place from distinct addresses, then one more anywhere is sent at once.
    const taken = LIMITED_HELD.perClient + 1;
    for (let i = 0; i < LIMITED_HELD.total - taken; i++) assert.ok(failures.hold(`10.1.${i >> 8}.${i & 255}`));
    assert.equal(failures.hold('10.0.0.3'), false, 'no place left in all');
    failures.release('10.0.0.2');
    assert.ok(failures.hold('10.0.0.3'));
  });
});
