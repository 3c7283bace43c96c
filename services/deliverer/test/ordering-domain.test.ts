import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { copartitionedOwner } from '@sluice/kafka';
import {
  afterDeadLettered,
  afterStep,
  freshDecision,
  isIdle,
  PARK_TAIL_MAX,
  parked,
  parkTag,
  retryDecision,
  tailFull,
  trimTail,
  unwrittenPlace,
  waitingDecision,
  QUEUE_STATE_MAX_BYTES,
  readQueueState,
  type QueueState,
  type WaitingPlace,
} from '../src/ordering/queue-rules.ts';
import { decodeStateRecord, QueueStates } from '../src/ordering/queue-states.ts';
import { parkedHeaders, unparkJob } from '../src/parking/parked-job.ts';
import type { DeliveryJob } from '../src/intake/delivery-job.ts';
import { attemptWindow, checkWindow } from '../src/attempt/window.ts';

const limits = { maxEvents: 2, maxBytes: 1_000 };
const fresh = (id: string, inFlight = false) => ({ messageId: id, bytes: 10, inFlight });
/** Parks each id in turn; returns the queue and the places of their waiting records. */
function park(q: QueueState | undefined, ...ids: string[]): { q: QueueState; at: Record<string, WaitingPlace> } {
  const at: Record<string, WaitingPlace> = {};
  let state = q;
  for (const id of ids) {
    const out = parked(state, { messageId: id, bytes: 10, epoch: 'e1' });
    state = out.state;
    at[id] = { messageId: id, seq: out.seq, bytes: 10, ...(out.state.epoch && { epoch: out.state.epoch }) };
  }
  return { q: state!, at };
}
const release = 'release' as const;

describe('per-user queue rules', () => {
  it('a fresh event is attempted while nothing is held, waiting or in flight, and waits otherwise', () => {
    assert.equal(freshDecision(undefined, fresh('a'), limits), 'attempt');
    assert.equal(freshDecision({ first: 3, next: 3, bytes: 0 }, fresh('a'), limits), 'attempt');
    assert.equal(freshDecision(undefined, fresh('a', true), limits), 'wait', "behind its user's attempt in flight");
    assert.equal(freshDecision({ head: 'h', first: 0, next: 0, bytes: 0 }, fresh('a'), limits), 'wait');
    assert.equal(freshDecision(park(undefined, 'x').q, fresh('a'), limits), 'wait');
    // A full queue dead-letters the newcomer: by count, or by bytes.
    assert.equal(
      freshDecision(park({ head: 'h', first: 0, next: 0, bytes: 0 }, 'x', 'y').q, fresh('a'), limits),
      'full',
    );
    assert.equal(freshDecision({ head: 'h', first: 0, next: 1, bytes: 995, last: 'x' }, fresh('a'), limits), 'full');
  });

  it('the live head read again is attempted; a head in the retry path is not; the last parked is written again', () => {
    const live: QueueState = { head: 'h', live: true, first: 0, next: 0, bytes: 0 };
    assert.equal(freshDecision(live, fresh('h'), limits), 'attempt-head');
    assert.equal(freshDecision(live, fresh('h', true), limits), 'already');
    assert.equal(freshDecision({ ...live, live: undefined }, fresh('h'), limits), 'already');
    assert.equal(freshDecision(park(live, 'a').q, fresh('a'), limits), 'rewrite');
    assert.equal(retryDecision(live, 'h'), 'stray', 'a live head is not in the retry path');
  });

  it('a retrying event becomes the head; its delivery releases the queue, whose events then go in order', () => {
    let q = afterStep(undefined, { messageId: 'h', outcome: 'retrying', onDeadLetter: release })!;
    assert.deepEqual(q, { head: 'h', first: 0, next: 0, bytes: 0 });
    const { q: queued, at } = park(q, 'a', 'b');
    q = queued;
    assert.equal(waitingDecision(q, at.a!, 'idle'), 'cycle', 'not while the head is in the retry path');
    assert.equal(retryDecision(q, 'h'), 'head');
    assert.equal(retryDecision(q, 'x'), 'stray');
    q = afterStep(q, { messageId: 'h', outcome: 'delivered', onDeadLetter: release })!;
    assert.equal(q.head, undefined);
    assert.equal(waitingDecision(q, at.b!, 'idle'), 'cycle', 'b waits for a');
    assert.equal(waitingDecision(q, at.a!, 'in-flight'), 'cycle', 'not while an attempt of the user is in flight');
    assert.equal(waitingDecision(q, at.a!, 'idle'), 'deliver');
    q = afterStep(q, { messageId: 'a', outcome: 'delivered', onDeadLetter: release, fromWaiting: at.a! })!;
    assert.equal(waitingDecision(q, at.a!, 'idle'), 'drop', 'a copy of a delivered event is dropped');
    assert.equal(waitingDecision(q, at.b!, 'idle'), 'deliver');
    q = afterStep(q, { messageId: 'b', outcome: 'delivered', onDeadLetter: release, fromWaiting: at.b! })!;
    assert.ok(isIdle(q));
    assert.equal(q.bytes, 0);
  });

  it('every park whose waiting record may be missing is in the tail: read again, each is written at its own place', () => {
    const { q } = park({ head: 'h', first: 0, next: 0, bytes: 0 }, 'a', 'b', 'c');
    assert.deepEqual(
      ['a', 'b', 'c', 'd'].map((id) => unwrittenPlace(q, id)),
      [0, 1, 2, undefined],
    );
    assert.equal(freshDecision(q, fresh('b'), { maxEvents: 10, maxBytes: 1_000 }), 'rewrite');
    // Written here: a and b leave the tail (from the oldest on), c stays until its record is written.
    const trimmed = trimTail(q, (seq) => seq < 2)!;
    assert.deepEqual(trimmed.tail, { from: 2, tags: [parkTag('c')] });
    assert.equal(unwrittenPlace(trimmed, 'a'), undefined);
    // Only a prefix goes: b written before a keeps both.
    assert.deepEqual(trimTail(q, (seq) => seq === 1)!.tail, q.tail);
    // A record leaving the front of the queue takes its tag with it.
    const moved = afterStep(
      { ...q, head: undefined },
      {
        messageId: 'a',
        outcome: 'delivered',
        onDeadLetter: release,
        fromWaiting: { messageId: 'a', seq: 0, bytes: 10, epoch: 'e1' },
      },
    )!;
    assert.deepEqual(moved.tail, { from: 1, tags: [parkTag('b'), parkTag('c')] });
    // A record of the earlier format names its last park by id: it stays covered once the tail starts.
    const old = parked(
      { head: 'h', first: 0, next: 1, bytes: 10, last: 'z' },
      { messageId: 'y', bytes: 10, epoch: 'e1' },
    ).state;
    assert.deepEqual([unwrittenPlace(old, 'z'), unwrittenPlace(old, 'y'), old.last], [0, 1, undefined]);
    // The tail is bounded: a further park waits (tailFull) for the oldest to be written.
    const full = park(undefined, ...Array.from({ length: PARK_TAIL_MAX }, (_, i) => `e${i}`)).q;
    assert.ok(tailFull(full));
    assert.ok(!tailFull(trimTail(full, (seq) => seq === 0)));
    // A park on a full tail pushes out its oldest (the caller waits while that one is being written here).
    const pushed = parked(full, { messageId: 'more', bytes: 10, epoch: 'e1' }).state;
    assert.equal(pushed.tail?.tags.length, PARK_TAIL_MAX);
    assert.deepEqual(
      [pushed.tail?.from, unwrittenPlace(pushed, 'e0'), unwrittenPlace(pushed, 'more')],
      [1, undefined, PARK_TAIL_MAX],
    );
    assert.ok(readQueueState(JSON.parse(JSON.stringify(pushed))), 'still a readable state record');
    const encoded = JSON.stringify({ v: 2, ...full, head: '"\\'.repeat(43), deadHead: '"\\'.repeat(43) });
    assert.ok(Buffer.byteLength(encoded) <= QUEUE_STATE_MAX_BYTES, `${Buffer.byteLength(encoded)} B`);
  });

  it('an event parked behind an attempt in flight makes that attempt the live head until its outcome', () => {
    const { state } = parked(undefined, { messageId: 'b', bytes: 10, epoch: 'e1', behind: 'a' });
    assert.deepEqual(state, {
      head: 'a',
      live: true,
      first: 0,
      next: 1,
      epoch: 'e1',
      bytes: 10,
      tail: { from: 0, tags: [parkTag('b')] },
    });
    const place = { messageId: 'b', seq: 0, bytes: 10, epoch: 'e1' };
    assert.equal(waitingDecision(state, place, 'idle'), 'cycle');
    const paused = afterStep(state, { messageId: 'a', outcome: 'parked', onDeadLetter: release })!;
    assert.equal(paused.head, 'a', 'parked by a pause, it stays the head');
    const retrying = afterStep(state, { messageId: 'a', outcome: 'retrying', onDeadLetter: release })!;
    assert.deepEqual([retrying.head, retrying.live], ['a', undefined], 'in the retry path now');
    const done = afterStep(state, { messageId: 'a', outcome: 'delivered', onDeadLetter: release })!;
    assert.equal(waitingDecision(done, place, 'idle'), 'deliver');
  });

  it('a waiting event that fails retryably becomes the head of what is left; one parked by a pause leads it', () => {
    const { q, at } = park(undefined, 'a', 'b');
    const retry = afterStep(q, { messageId: 'a', outcome: 'retrying', onDeadLetter: release, fromWaiting: at.a! })!;
    assert.equal(retry.head, 'a');
    assert.equal(waitingDecision(retry, at.b!, 'idle'), 'cycle');
    const paused = afterStep(q, { messageId: 'a', outcome: 'parked', onDeadLetter: release, fromWaiting: at.a! })!;
    assert.deepEqual([paused.head, paused.live], ['a', true]);
  });

  it('a park into a queue with nothing waiting starts a new run of numbering; a record of another run is a copy, whatever its number', () => {
    const one = parked(undefined, { messageId: 'a', bytes: 10, epoch: 'run1' });
    assert.equal(one.state.epoch, 'run1');
    const two = parked(one.state, { messageId: 'b', bytes: 10, epoch: 'run2' });
    assert.equal(two.state.epoch, 'run1', 'parked behind a waiting one: the same run');
    const a: WaitingPlace = { messageId: 'a', seq: one.seq, bytes: 10, epoch: 'run1' };
    assert.equal(waitingDecision(two.state, a, 'idle'), 'deliver');
    // Both gone: the next park starts a new run with the numbers going on.
    const gone = afterDeadLettered(afterDeadLettered(two.state, a), {
      messageId: 'b',
      seq: two.seq,
      bytes: 10,
      epoch: 'run1',
    });
    assert.equal(gone.first, gone.next);
    const three = parked(gone, { messageId: 'c', bytes: 10, epoch: 'run3' });
    assert.equal(three.state.epoch, 'run3');
    const c: WaitingPlace = { messageId: 'c', seq: three.seq, bytes: 10, epoch: 'run3' };
    assert.equal(waitingDecision(three.state, c, 'idle'), 'deliver');
    // A queue that ended starts again at 0: a record of the first run at that number is a copy.
    const again = parked(undefined, { messageId: 'd', bytes: 10, epoch: 'run4' });
    assert.equal(again.seq, a.seq);
    assert.equal(waitingDecision(again.state, a, 'idle'), 'drop');
    assert.equal(
      waitingDecision(again.state, { ...a, epoch: undefined }, 'idle'),
      'drop',
      'no run: a record of an earlier version',
    );
    assert.deepEqual(afterDeadLettered(again.state, a), again.state, 'its leaving moves nothing');
    // Read from a state record, the run is kept; one that is not a short string makes the record unreadable.
    assert.equal(readQueueState(JSON.parse(JSON.stringify(again.state)))?.epoch, 'run4');
    assert.equal(readQueueState({ ...again.state, epoch: 'x'.repeat(17) }), undefined);
  });

  it('a dead head releases the queue (release), or takes the waiting events with it (dead-letter-waiting)', () => {
    const { q: held, at } = park({ head: 'h', first: 0, next: 0, bytes: 0 }, 'a', 'b');
    const released = afterStep(held, { messageId: 'h', outcome: 'dead', onDeadLetter: release })!;
    assert.equal(waitingDecision(released, at.a!, 'idle'), 'deliver');
    let q = afterStep(held, { messageId: 'h', outcome: 'dead', onDeadLetter: 'dead-letter-waiting' })!;
    assert.deepEqual([q.deadUntil, q.deadHead], [2, 'h']);
    assert.equal(waitingDecision(q, at.b!, 'idle'), 'cycle');
    assert.equal(waitingDecision(q, at.a!, 'idle'), 'dead-letter');
    q = afterDeadLettered(q, at.a!);
    // A later event parks behind the dead ones and is delivered, not dead-lettered.
    const later = parked(q, { messageId: 'c', bytes: 10, epoch: 'e1' });
    q = later.state;
    assert.equal(waitingDecision(q, at.b!, 'idle'), 'dead-letter');
    q = afterDeadLettered(q, at.b!);
    assert.equal(q.deadUntil, undefined);
    assert.equal(q.deadHead, undefined);
    assert.equal(waitingDecision(q, { messageId: 'c', seq: later.seq, bytes: 10, epoch: 'e1' }, 'idle'), 'deliver');
  });

  it('an event dead-lettered without being the head, or a retried head parked by a pause, leaves the queue as it is', () => {
    const q: QueueState = { head: 'h', first: 0, next: 1, last: 'a', bytes: 10 };
    assert.equal(afterStep(q, { messageId: 'x', outcome: 'dead', onDeadLetter: 'dead-letter-waiting' }), q);
    assert.equal(afterStep(q, { messageId: 'h', outcome: 'parked', onDeadLetter: release }), q);
  });

  it('a record of the list format is read as a queue of waiting ids, ahead of any numbered record', () => {
    const value = Buffer.from(JSON.stringify({ d: { head: 'h', queue: ['a', 'b'] }, e: { queue: [] } }));
    const read = decodeStateRecord('src:user', value);
    assert.equal(read.kind, 'list-format');
    const states = new QueueStates(1 << 20);
    states.apply(read);
    let q = states.get('d', 'src:user')!;
    assert.deepEqual(q.legacy, ['a', 'b']);
    assert.equal(states.get('e', 'src:user'), undefined);
    const c = parked(q, { messageId: 'c', bytes: 10, epoch: 'e1' });
    q = afterStep(c.state, { messageId: 'h', outcome: 'delivered', onDeadLetter: release })!;
    const numbered = { messageId: 'c', seq: c.seq, bytes: 10, ...(c.state.epoch && { epoch: c.state.epoch }) };
    assert.equal(waitingDecision(q, numbered, 'idle'), 'cycle', 'behind the listed ids');
    assert.equal(waitingDecision(q, { messageId: 'b', seq: undefined, bytes: 0 }, 'idle'), 'cycle');
    assert.equal(waitingDecision(q, { messageId: 'a', seq: undefined, bytes: 0 }, 'idle'), 'deliver');
    q = afterStep(q, {
      messageId: 'a',
      outcome: 'delivered',
      onDeadLetter: release,
      fromWaiting: { messageId: 'a', seq: undefined, bytes: 0 },
    })!;
    q = afterStep(q, {
      messageId: 'b',
      outcome: 'delivered',
      onDeadLetter: release,
      fromWaiting: { messageId: 'b', seq: undefined, bytes: 0 },
    })!;
    assert.equal(waitingDecision(q, numbered, 'idle'), 'deliver');
    // Written again in the numbered format, the list-format record is to be deleted.
    assert.equal(states.set('d', 'src:user', q).listKeyDone, 'src:user');
  });

  it('a malformed state record is reported, not applied', () => {
    for (const [key, value] of [
      ['d/src:u', '{"v":2,"first":"x","next":1,"bytes":0}'],
      ['d/src:u', 'not json'],
      ['d/src:u', '{"v":2,"first":3,"next":1,"bytes":0}'],
      ['src:u', '[1'],
    ] as const)
      assert.equal(decodeStateRecord(key, Buffer.from(value)).kind, 'malformed', value);
    assert.equal(decodeStateRecord('src:u', Buffer.from('{"d":{"queue":"x"}}')).kind, 'list-format');
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
    const out = unparkJob(
      { key: 'src:u', body: Buffer.from('{}'), headers: parkedHeaders(job, T0, T0 + 1_000) },
      T0 + 6 * HOUR,
    );
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
