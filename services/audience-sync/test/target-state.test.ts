import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AudienceChunk, SyncTarget, TraitChunk } from '../src/domain/snapshot.ts';
import { TargetState, type MemberChange } from '../src/domain/target-state.ts';

const audience: SyncTarget = {
  kind: 'audience',
  sourceId: 'src',
  name: 'High Value Users',
  property: 'high_value_users',
};
const trait: SyncTarget = { kind: 'trait', sourceId: 'src', name: 'LTV', property: 'ltv' };
let offset = 0;
const at = () => ({ partition: 0, offset: offset++ });
const chunk = (syncId: string, members: string[], final = true): AudienceChunk => ({
  kind: 'audience',
  target: audience,
  syncId,
  members,
  final,
});
const traitChunk = (syncId: string, values: Record<string, unknown>, final = true): TraitChunk => ({
  kind: 'trait',
  target: trait,
  syncId,
  final,
  values: Object.entries(values).map(([u, v]) => [u, JSON.stringify(v)]),
});
const sorted = (changes: Iterable<MemberChange>) =>
  [...changes].map((c) => [c.userId, c.value]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));

function sync(state: TargetState, ...chunks: (AudienceChunk | TraitChunk)[]): unknown[][] {
  let last = at();
  for (const c of chunks) state.applyChunk(c, (last = at()));
  const changes = sorted(state.changes());
  state.complete(last);
  return changes;
}

test('first sync: every member joins; second: only joined and left; identical third: nothing', () => {
  const s = new TargetState(audience);
  assert.deepEqual(sync(s, chunk('1', ['a', 'b', 'c'])), [
    ['a', true],
    ['b', true],
    ['c', true],
  ]);
  assert.deepEqual(sync(s, chunk('2', ['a', 'b', 'd'])), [
    ['c', false],
    ['d', true],
  ]);
  assert.deepEqual(sync(s, chunk('3', ['d', 'b', 'a'])), []);
  assert.equal(s.index.size, 3);
});

test('chunks accumulate until final, duplicates across chunks count once', () => {
  const s = new TargetState(audience);
  sync(s, chunk('1', ['a', 'b']));
  const changes = sync(s, chunk('2', ['b', 'x'], false), chunk('2', ['x', 'y'], false), chunk('2', [], true));
  assert.deepEqual(changes, [
    ['a', false],
    ['x', true],
    ['y', true],
  ]);
});

test('nothing is decided before final; a newer sync abandons an unfinished one without trace', () => {
  const s = new TargetState(audience);
  sync(s, chunk('1', ['a', 'b']));
  assert.equal(s.applyChunk(chunk('2', ['z'], false), at()).action, 'applied');
  const verdict = s.applyChunk(chunk('3', ['a', 'b', 'q'], true), at());
  assert.deepEqual(verdict, { action: 'applied', complete: true, abandoned: '2' });
  assert.deepEqual(sorted(s.changes()), [['q', true]]);
});

test('a resent completed sync and replayed records are ignored', () => {
  const s = new TargetState(audience);
  const first = at();
  s.applyChunk(chunk('1', ['a'], false), first);
  const fin = at();
  s.applyChunk(chunk('1', ['b']), fin);
  s.complete(fin);
  assert.deepEqual(s.applyChunk(chunk('1', ['a']), at()), { action: 'ignored', reason: 'already_completed' });
  assert.deepEqual(s.applyChunk(chunk('0', ['x']), first), { action: 'ignored', reason: 'replayed' });
});

test('rebuilt state diffs like the original', () => {
  const s = new TargetState(audience);
  s.loadMember('a', '1');
  s.loadMember('b', '1');
  s.loadMember('c', '1');
  s.loadMember('c', null);
  assert.deepEqual(sync(s, chunk('9', ['a', 'c'])), [
    ['b', false],
    ['c', true],
  ]);
});

test('computed traits: changed values only; a user missing from the snapshot gets null', () => {
  const s = new TargetState(trait);
  assert.deepEqual(sync(s, traitChunk('1', { a: 10, b: 'x', c: { n: 1 } })), [
    ['a', 10],
    ['b', 'x'],
    ['c', { n: 1 }],
  ]);
  assert.deepEqual(sync(s, traitChunk('2', { a: 10, b: 'y', c: { n: 1 }, d: true })), [
    ['b', 'y'],
    ['d', true],
  ]);
  assert.deepEqual(sync(s, traitChunk('3', { a: 10, b: 'y', d: true })), [['c', null]]);
  // Changed and changed back within one sync: nothing.
  assert.deepEqual(sync(s, traitChunk('4', { a: 11 }, false), traitChunk('4', { a: 10, b: 'y', d: true })), []);
});

test('heavy churn keeps the index compact and correct', () => {
  const s = new TargetState(audience);
  const ids = (from: number, n: number) => Array.from({ length: n }, (_, i) => `u${from + i}`);
  sync(s, chunk('0', ids(0, 5000)));
  for (let round = 1; round <= 6; round++) {
    const changes = sync(s, chunk(String(round), ids(round * 5000, 5000)));
    assert.equal(changes.length, 10_000);
    assert.equal(changes.filter((c) => c[1] === true).length, 5000);
  }
  assert.equal(s.index.size, 5000);
  assert.ok(s.index.entryCount <= 10_000, `entries ${s.index.entryCount}`);
});
