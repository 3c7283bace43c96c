import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WaiterQueue } from '../src/waiter-queue.ts';

describe('WaiterQueue', () => {
  it('keeps first-in-first-out order across the drop of its taken front', () => {
    const q = new WaiterQueue<number>();
    for (let i = 0; i < 3_000; i += 1) q.push(i);
    const taken: number[] = [];
    for (let i = 0; i < 2_000; i += 1) taken.push(q.shift()!);
    for (let i = 3_000; i < 3_010; i += 1) q.push(i);
    assert.equal(q.size, 1_010);
    for (let item = q.shift(); item !== undefined; item = q.shift()) taken.push(item);
    assert.deepEqual(
      taken,
      Array.from({ length: 3_010 }, (_, i) => i),
    );
    assert.equal(q.size, 0);
    assert.equal(q.shift(), undefined);
  });
});
