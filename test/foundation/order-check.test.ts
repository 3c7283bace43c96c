// The ordering drills' checker and receiver: a reordered trail is caught, a duplicate never breaks
// what was applied, a dead-lettered head leaves an allowed gap; the receiver de-duplicates, fails a
// seeded share of requests and holds one user back for a while.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkOrder, latencyFigures, type OrderTrail } from '../support/order-check.ts';
import { type AppliedEvent, seededRandom, StatefulReceiver } from '../support/order-receiver.ts';

const accepted = new Map([
  ['u1', ['a0', 'a1', 'a2']],
  ['u2', ['b0', 'b1']],
]);
const ackedAt = new Map(['a0', 'a1', 'a2', 'b0', 'b1'].map((id) => [id, 0]));

/** A trail from the receiver's answers in arrival order: [id, at, status]. */
function trail(answers: [string, number, number][], deadLettered?: Set<string>): OrderTrail {
  const user = (id: string) => (id.startsWith('a') ? 'u1' : 'u2');
  const applied: AppliedEvent[] = [];
  const seen = new Set<string>();
  for (const [messageId, at, status] of answers)
    if (status === 200 && !seen.has(messageId)) {
      seen.add(messageId);
      applied.push({ messageId, user: user(messageId), at });
    }
  const arrivals = answers.map(([messageId, at, status]) => ({ messageId, at, status }));
  return { accepted, ackedAt, applied, arrivals, ...(deadLettered && { deadLettered }) };
}

describe('the order checker', () => {
  it('passes a trail applied in acceptance order, with the latency of each event', () => {
    const r = checkOrder(
      trail([
        ['a0', 10, 200],
        ['b0', 11, 503],
        ['a1', 12, 200],
        ['b0', 20, 200],
        ['b1', 21, 200],
        ['a2', 22, 200],
      ]),
    );
    assert.deepEqual(r.reordered, []);
    assert.deepEqual(r.missing, []);
    assert.equal(r.applied, 5);
    assert.equal(r.attemptsAhead, 0);
    assert.equal(r.duplicates, 0);
    assert.deepEqual(r.latencyByUser.get('u1'), [10, 12, 22]);
    assert.deepEqual(
      r.freeLatencies,
      [10, 20],
      'all acknowledged at 0: only the first event of each user had nothing to wait for',
    );
    const later = checkOrder({
      ...trail([
        ['a0', 10, 200],
        ['a1', 20, 200],
        ['a2', 30, 200],
      ]),
      ackedAt: new Map([
        ['a0', 0],
        ['a1', 15],
        ['a2', 15],
      ]),
    });
    assert.deepEqual(later.freeLatencies, [10, 5], 'a1 was acknowledged after a0 was applied; a2 before a1 was');
    assert.deepEqual(latencyFigures(r, new Set(['u2'])), { events: 3, p50: 12, p99: 22, max: 22, p99UserMax: 22 });
  });

  it("an event's own wait starts when its user's previous event is applied, if that is after its ack", () => {
    const r = checkOrder({
      accepted: new Map([['a', ['a0', 'a1', 'a2']]]),
      applied: [
        { messageId: 'a0', user: 'a', at: 100 },
        { messageId: 'a1', user: 'a', at: 130 },
        { messageId: 'a2', user: 'a', at: 400 },
      ],
      arrivals: [],
      ackedAt: new Map([
        ['a0', 0],
        ['a1', 10],
        ['a2', 200],
      ]),
    });
    assert.deepEqual(r.ownWaitByUser.get('a'), [100, 30, 200], 'a1 could go at 100 (a0 applied), a2 at its ack');
    assert.equal(latencyFigures(r, new Set(), 'ownWait').max, 200);
    assert.equal(latencyFigures(r).max, 200, 'ack → applied: a2 200 ms, a1 120 ms');
  });

  it('catches an event applied after a later one of its user (a retry overtaken)', () => {
    const r = checkOrder(
      trail([
        ['a0', 10, 200],
        ['a1', 11, 503],
        ['a2', 12, 200],
        ['a1', 30, 200],
        ['b0', 31, 200],
        ['b1', 32, 200],
      ]),
    );
    assert.deepEqual(r.reordered, [{ user: 'u1', appliedPositions: [0, 2, 1] }]);

    assert.equal(r.attemptsAhead, 1, 'a2 was attempted while a1 waited for its retry');
  });

  it('counts a duplicate after a later event without calling the applied order broken, and names what is missing', () => {
    const r = checkOrder(
      trail([
        ['a0', 10, 200],
        ['a1', 11, 200],
        ['a0', 12, 200],
        ['b0', 13, 200],
      ]),
    );
    assert.deepEqual(r.reordered, []);
    assert.equal(r.duplicates, 1);
    assert.equal(r.duplicatesAfterLater, 1);
    assert.deepEqual(r.missing, ['a2', 'b1']);
  });

  it('allows the gap a dead-lettered head leaves, and does not count waiting behind it as missing', () => {
    const r = checkOrder(
      trail(
        [
          ['a0', 10, 503],
          ['a0', 20, 503],
          ['a1', 30, 200],
          ['a2', 31, 200],
          ['b0', 32, 200],
          ['b1', 33, 200],
        ],
        new Set(['a0']),
      ),
    );
    assert.deepEqual(r.reordered, []);
    assert.deepEqual(r.missing, []);
    assert.equal(r.attemptsAhead, 0);
  });
});

describe('the stateful receiver', () => {
  const req = (messageId: string, userId: string, at: number) => ({
    method: 'POST',
    path: '/hook',
    headers: { 'x-message-id': messageId },
    body: Buffer.from(JSON.stringify({ type: 'track', userId, messageId })),
    at,
  });

  it('fails the same seeded share of requests every run', () => {
    const run = () => {
      const r = new StatefulReceiver({ seed: 7, failRate: 0.1 });
      return Array.from({ length: 2_000 }, (_, i) => r.behaviour(req(`m${i}`, `u${i}`, i), i).status);
    };
    const first = run();
    assert.deepEqual(run(), first);
    const failed = first.filter((s) => s === 503).length;
    assert.ok(failed > 150 && failed < 250, `${failed} of 2,000 failed`);
    assert.notDeepEqual(Array.from({ length: 5 }, seededRandom(1)), Array.from({ length: 5 }, seededRandom(2)));
  });

  it('applies an event once, and holds the stuck user back for its window from its first arrival', () => {
    const r = new StatefulReceiver({ seed: 1, failRate: 0, stuckUser: 'stuck', stuckMs: 1_000 });
    assert.equal(r.behaviour(req('s0', 'stuck', 5_000), 0).status, 503);
    assert.equal(r.behaviour(req('s0', 'stuck', 5_999), 1).status, 503);
    assert.equal(r.behaviour(req('x0', 'other', 5_100), 2).status, 200);
    assert.equal(r.behaviour(req('s0', 'stuck', 6_000), 3).status, 200);
    assert.equal(r.behaviour(req('s0', 'stuck', 6_001), 4).status, 200, 'a redelivery is answered 200');
    assert.deepEqual(
      r.applied.map((a) => [a.messageId, a.user, a.at]),
      [
        ['x0', 'other', 5_100],
        ['s0', 'stuck', 6_000],
      ],
    );
    assert.equal(r.stuckSince, 5_000);
  });
});
