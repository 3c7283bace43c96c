import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AuthFailures } from '../src/adapters/http/auth-failures.ts';
import { AUTH_FAILURES } from '../src/constants.ts';

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
});
