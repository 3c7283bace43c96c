import assert from 'node:assert/strict';
import { it } from 'node:test';
import { countIn, emptyTally } from '../src/tally.ts';

// A replay plan's counts by destination: destination ids are any [A-Za-z0-9._-] string.
it('counts destination ids that are Object.prototype names like any other, and serialises them as themselves', () => {
  const tally = emptyTally();
  const ids = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'crm', 'constructor', '__proto__'];
  for (const id of ids) countIn(tally, id);
  assert.deepEqual(Object.entries(tally), [
    ['constructor', 2],
    ['__proto__', 2],
    ['toString', 1],
    ['hasOwnProperty', 1],
    ['valueOf', 1],
    ['crm', 1],
  ]);
  assert.equal(
    JSON.stringify(tally),
    '{"constructor":2,"__proto__":2,"toString":1,"hasOwnProperty":1,"valueOf":1,"crm":1}',
  );
  assert.equal(({} as { polluted?: number }).polluted, undefined, 'no prototype touched');
});

it('counts ordinary ids', () => {
  const tally = emptyTally();
  for (const id of ['crm', 'web-hook', 'crm']) countIn(tally, id);
  assert.deepEqual({ ...tally }, { crm: 2, 'web-hook': 1 });
});
