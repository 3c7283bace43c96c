import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OffsetTracker } from '@sluice/kafka';

describe('OffsetTracker: commits only below the lowest unfinished record', () => {
  it('nothing started → nothing to commit', () => {
    assert.equal(new OffsetTracker().committable(), undefined);
  });

  it('out-of-order completion never commits past an unfinished record', () => {
    const t = new OffsetTracker();
    [10, 11, 12, 13].forEach((o) => t.begin(o));
    t.finish(13);
    t.finish(11);
    assert.equal(t.committable(), 10);
    t.finish(10);
    assert.equal(t.committable(), 12);
    t.finish(12);
    assert.equal(t.committable(), 14);
  });

  it('takeCommit reports each new position once', () => {
    const t = new OffsetTracker();
    t.begin(0);
    assert.equal(t.takeCommit(), 0);
    assert.equal(t.takeCommit(), undefined);
    t.finish(0);
    assert.equal(t.takeCommit(), 1);
  });

  it('a record delivered twice (rebalance) stays unfinished until both handlers finish', () => {
    const t = new OffsetTracker();
    t.begin(5);
    t.begin(5);
    t.finish(5);
    assert.equal(t.committable(), 5);
    t.finish(5);
    assert.equal(t.committable(), 6);
  });
});
