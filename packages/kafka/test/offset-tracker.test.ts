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

  it('offers a position until Kafka confirmed it, then only newer ones', () => {
    const t = new OffsetTracker();
    t.begin(0);
    assert.equal(t.uncommitted(), 0);
    assert.equal(t.uncommitted(), 0, 'not confirmed yet (the commit failed or is in flight): offered again');
    t.committed(0);
    assert.equal(t.uncommitted(), undefined);
    t.finish(0);
    assert.equal(t.uncommitted(), 1);
    t.committed(1);
    t.committed(0); // a late confirmation of an older commit does not move it back
    assert.equal(t.uncommitted(), undefined);
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

  it('a detached record holds the commit but no slot; a record not detached holds both', () => {
    const t = new OffsetTracker();
    t.begin(0);
    t.begin(1);
    t.detach(0);
    t.detach(0); // idempotent
    t.detach(7); // not in flight: nothing
    assert.equal(t.inFlight, 2);
    assert.equal(t.holding, 1, 'only record 1 takes a slot');
    t.finish(1);
    assert.equal(t.holding, 0);
    assert.equal(t.committable(), 0, 'nothing committed past the detached record');
    t.finish(0);
    assert.equal(t.committable(), 2);
    t.begin(2);
    assert.equal(t.holding, 1, 'a finished detached record leaves nothing behind');
  });
});
