import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { activeKeys, isActive, newestActiveKey, type SigningKey } from '@sluice/webhook-signature';

const T = Date.UTC(2026, 0, 31);
const HOUR = 3_600_000;

describe('signing keys: rotation windows on an injected clock', () => {
  const old: SigningKey = { secret: 'old', notAfter: T };
  const next: SigningKey = { secret: 'new', notBefore: T - HOUR };

  it('notBefore is inclusive and notAfter exclusive', () => {
    assert.equal(isActive({ secret: 's', notBefore: T }, T - 1), false);
    assert.equal(isActive({ secret: 's', notBefore: T }, T), true);
    assert.equal(isActive({ secret: 's', notAfter: T }, T - 1), true);
    assert.equal(isActive({ secret: 's', notAfter: T }, T), false);
    assert.equal(isActive({ secret: 's' }, 0), true);
  });

  it('before the overlap only the old key is active; during it both; after notAfter only the new', () => {
    assert.deepEqual(
      activeKeys([old, next], T - 2 * HOUR).map((k) => k.secret),
      ['old'],
    );
    assert.deepEqual(
      activeKeys([old, next], T - 1).map((k) => k.secret),
      ['old', 'new'],
    );
    assert.deepEqual(
      activeKeys([old, next], T).map((k) => k.secret),
      ['new'],
    );
  });

  it('the newest active key is the one with the latest notBefore, the last listed on a tie', () => {
    assert.equal(newestActiveKey([old, next], T - 2 * HOUR)?.secret, 'old');
    assert.equal(newestActiveKey([old, next], T - 1)?.secret, 'new');
    assert.equal(newestActiveKey([next, old], T - 1)?.secret, 'new');
    assert.equal(newestActiveKey([{ secret: 'a' }, { secret: 'b' }], T)?.secret, 'b');
    assert.equal(newestActiveKey([{ secret: 'a', notAfter: T }], T), undefined);
  });
});
