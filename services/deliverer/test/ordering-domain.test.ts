import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { copartitionedOwner } from '@sluice/kafka';
import {
  afterDeadLettered,
  afterStep,
  freshDecision,
  isEmpty,
  parked,
  retryDecision,
  waitingDecision,
  type KeyQueue,
} from '../src/domain/ordering.ts';
import { parkedHeaders, unparkJob } from '../src/domain/parked-job.ts';
import type { DeliveryJob } from '../src/domain/delivery-job.ts';
import { attemptWindow, checkWindow } from '../src/domain/window.ts';

describe('per-user queue rules', () => {
  it('a fresh event is attempted while nothing is held or waiting, and waits otherwise', () => {
    assert.equal(freshDecision(undefined), 'attempt');
    assert.equal(freshDecision({ queue: [] }), 'attempt');
    assert.equal(freshDecision({ head: 'h', queue: [] }), 'wait');
    assert.equal(freshDecision({ queue: ['a'] }), 'wait');
  });

  it('a retrying event becomes the head; its delivery releases the queue, whose events then go in order', () => {
    let q = afterStep(undefined, 'h', 'retrying', 'release');
    assert.deepEqual(q, { head: 'h', queue: [] });
    q = parked(parked(q, 'a'), 'b');
    assert.deepEqual(q.queue, ['a', 'b']);
    assert.equal(waitingDecision(q, 'a'), 'cycle', 'not while the head is in the retry path');
    assert.equal(retryDecision(q, 'h'), 'head');
    assert.equal(retryDecision(q, 'x'), 'stray');
    q = afterStep(q, 'h', 'delivered', 'release');
    assert.equal(q.head, undefined);
    assert.equal(waitingDecision(q, 'b'), 'cycle', 'b waits for a');
    assert.equal(waitingDecision(q, 'a'), 'deliver');
    q = afterStep(q, 'a', 'delivered', 'release', true);
    assert.equal(waitingDecision(q, 'a'), 'drop', 'a copy of a delivered event is dropped');
    assert.equal(waitingDecision(q, 'b'), 'deliver');
    q = afterStep(q, 'b', 'delivered', 'release', true);
    assert.ok(isEmpty(q));
  });

  it('a waiting event that fails retryably becomes the head of what is left', () => {
    let q: KeyQueue = { queue: ['a', 'b'] };
    q = afterStep(q, 'a', 'retrying', 'release', true);
    assert.deepEqual(q, { head: 'a', queue: ['b'] });
    assert.equal(waitingDecision(q, 'b'), 'cycle');
  });

  it('a copy written again after a crash is not queued twice', () => {
    const q = parked(parked({ head: 'h', queue: [] }, 'a'), 'a');
    assert.deepEqual(q.queue, ['a']);
  });

  it('a dead head releases the queue (release), or takes the waiting events with it (dead-letter-waiting)', () => {
    const held: KeyQueue = { head: 'h', queue: ['a', 'b'] };
    const released = afterStep(held, 'h', 'dead', 'release');
    assert.deepEqual(released, { queue: ['a', 'b'] });
    assert.equal(waitingDecision(released, 'a'), 'deliver');
    let q = afterStep(held, 'h', 'dead', 'dead-letter-waiting');
    assert.deepEqual(q, { queue: ['a', 'b'], dead: 2, deadHead: 'h' });
    assert.equal(waitingDecision(q, 'b'), 'cycle');
    assert.equal(waitingDecision(q, 'a'), 'dead-letter');
    q = afterDeadLettered(q, 'a');
    assert.equal(waitingDecision(q, 'b'), 'dead-letter');
    q = afterDeadLettered(q, 'b');
    assert.ok(isEmpty(q));
    assert.equal(q.dead, undefined);
    assert.equal(q.deadHead, undefined);
  });

  it('an event dead-lettered without a head, or parked by a pause, leaves the queue as it is', () => {
    const q: KeyQueue = { head: 'h', queue: ['a'] };
    assert.equal(afterStep(q, 'x', 'dead', 'dead-letter-waiting'), q);
    assert.deepEqual(afterStep(q, 'h', 'parked', 'release'), q);
    assert.deepEqual(afterStep({ queue: ['a', 'b'] }, 'a', 'parked', 'release', true), { queue: ['b'] });
  });
});

describe('the window of a waiting event', () => {
  const T0 = 1_700_000_000_000;
  const HOUR = 3_600_000;
  const job: DeliveryJob = {
    key: 'src:u',
    body: Buffer.from('{}'),
    messageId: 'a',
    sourceId: 'src',
    destinationId: 'd',
    eventType: 'track',
    endpoints: ['https://a.example/h'],
  };
  it('does not count the time waited: accepted at T0, waiting 6 h, still inside its 4 h window', () => {
    const out = unparkJob('src:u', Buffer.from('{}'), parkedHeaders(job, T0, T0 + 1_000), T0 + 6 * HOUR);
    assert.ok(out.ok);
    const window = attemptWindow(out.job, out.acceptedAt, 4 * HOUR);
    assert.equal(checkWindow(window!, T0 + 6 * HOUR).open, true);
    assert.equal(checkWindow(window!, T0 + 11 * HOUR).open, false);
  });
});

describe('co-partitioned assignment', () => {
  it('gives partition p of every topic to the same process, whatever its member ids in each group', () => {
    const main = [
      { memberId: 'm-b', processId: 'p2' },
      { memberId: 'm-a', processId: 'p1' },
    ];
    const parked = [
      { memberId: 'x-a', processId: 'p2' },
      { memberId: 'x-z', processId: 'p1' },
    ];
    for (let p = 0; p < 6; p++) {
      const owner = main.find((m) => m.memberId === copartitionedOwner(main, p))!.processId;
      const other = parked.find((m) => m.memberId === copartitionedOwner(parked, p))!.processId;
      assert.equal(owner, other);
      assert.equal(owner, p % 2 === 0 ? 'p1' : 'p2');
    }
  });
});
