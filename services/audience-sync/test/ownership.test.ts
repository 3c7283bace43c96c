// The ownership rules (src/domain/ownership.ts) and the choice of the owner (single-owner assigner).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chooseOwner } from '@sluice/kafka';
import {
  INITIAL_OWNERSHIP,
  ownershipConfirmed,
  ownershipOnJoin,
  ownershipOnLeave,
  sameOffsets,
} from '../src/domain/ownership.ts';

test('first ownership is checked against the state read at start; a standby spell after owning means a restart', () => {
  let step = ownershipOnJoin(INITIAL_OWNERSHIP, false);
  assert.equal(step.verdict, 'standby');
  step = ownershipOnJoin(step.state, true);
  assert.equal(step.verdict, 'check-fresh');
  const owner = ownershipConfirmed(step.state);
  assert.equal(ownershipOnJoin(owner, true).verdict, 'consume', 'a rebalance that leaves the partitions here');
  const standby = ownershipOnJoin(owner, false);
  assert.equal(standby.verdict, 'standby');
  assert.equal(ownershipOnJoin(standby.state, true).verdict, 'rebuild');
});

test('owner again after a Kafka outage took it out of the group: checked against its own commits', () => {
  const owner = ownershipConfirmed(ownershipOnJoin(INITIAL_OWNERSHIP, true).state);
  const left = ownershipOnLeave(owner);
  assert.equal(ownershipOnJoin(left, true).verdict, 'check-committed');
  assert.equal(ownershipOnJoin(ownershipConfirmed(left), true).verdict, 'consume', 'a passed check clears it');
  const standbyAfter = ownershipOnJoin(left, false).state;
  assert.equal(ownershipOnJoin(standbyAfter, true).verdict, 'rebuild', 'another instance owned meanwhile');
  assert.equal(ownershipOnJoin(ownershipOnLeave(INITIAL_OWNERSHIP), true).verdict, 'check-fresh');
});

test('offsets are the same only if every partition has the same offset', () => {
  const read = new Map([
    [0, 10],
    [1, 4],
  ]);
  assert.equal(
    sameOffsets(
      read,
      new Map([
        [0, 10],
        [1, 4],
      ]),
    ),
    true,
  );
  assert.equal(
    sameOffsets(
      read,
      new Map([
        [0, 11],
        [1, 4],
      ]),
    ),
    false,
  );
  assert.equal(sameOffsets(read, new Map([[0, 10]])), false);
});

test('the owner keeps the partitions when others join; else the longest running member gets them', () => {
  const members = [
    { memberId: 'b', claim: { owner: false, startedAt: 1 } },
    { memberId: 'c', claim: { owner: true, startedAt: 5 } },
    { memberId: 'a', claim: undefined },
  ];
  assert.equal(chooseOwner(members), 'c');
  assert.equal(chooseOwner(members.map((m) => ({ ...m, claim: m.claim && { ...m.claim, owner: false } }))), 'b');
  assert.equal(
    chooseOwner([
      { memberId: 'y', claim: { owner: false, startedAt: 1 } },
      { memberId: 'x', claim: { owner: false, startedAt: 1 } },
    ]),
    'x',
  );
  assert.equal(chooseOwner([]), undefined);
});
