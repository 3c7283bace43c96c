// The ownership rules (src/domain/ownership.ts) and the choice of the owner (single-owner assigner).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chooseOwner } from '@sluice/kafka';
import { INITIAL_OWNERSHIP, ownershipOnJoin, stateUnchanged } from '../src/domain/ownership.ts';

test('first ownership is checked against the state read at start; a standby spell after owning means a restart', () => {
  let step = ownershipOnJoin(INITIAL_OWNERSHIP, false);
  assert.equal(step.verdict, 'standby');
  step = ownershipOnJoin(step.state, true);
  assert.equal(step.verdict, 'check-fresh');
  const owner = { ...step.state, everOwned: true };
  assert.equal(ownershipOnJoin(owner, true).verdict, 'consume', 'a rebalance that leaves the partitions here');
  const standby = ownershipOnJoin(owner, false);
  assert.equal(standby.verdict, 'standby');
  assert.equal(ownershipOnJoin(standby.state, true).verdict, 'rebuild');
});

test('the state is current only if every partition of the state topic ends where it did', () => {
  const read = new Map([
    [0, 10],
    [1, 4],
  ]);
  assert.equal(
    stateUnchanged(
      read,
      new Map([
        [0, 10],
        [1, 4],
      ]),
    ),
    true,
  );
  assert.equal(
    stateUnchanged(
      read,
      new Map([
        [0, 11],
        [1, 4],
      ]),
    ),
    false,
  );
  assert.equal(stateUnchanged(read, new Map([[0, 10]])), false);
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
