import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeadlineQueue } from '../src/transport/deadline-queue.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('DeadlineQueue', () => {
  it('fires each unfinished deadline on time, in order, once, with its reason', async () => {
    const queue = new DeadlineQueue();
    const fired: string[] = [];
    const started = performance.now();
    const a = queue.start(150, () => new Error('a'));
    a.addEventListener('abort', () => fired.push(`a@${Math.round(performance.now() - started)}`));
    await sleep(50);
    const b = queue.start(150, () => new Error('b'));
    b.addEventListener('abort', () => fired.push(`b@${Math.round(performance.now() - started)}`));
    const c = queue.start(150, () => new Error('c'));
    c.addEventListener('abort', () => fired.push('c'));
    queue.finish(c, 150);
    await sleep(300);
    queue.close();
    assert.deepEqual(
      fired.map((f) => f.split('@')[0]),
      ['a', 'b'],
    );
    const [at, bt] = fired.map((f) => Number(f.split('@')[1]));
    assert.ok(at! >= 148 && at! < 450, `a fired at ${at} ms`);
    assert.ok(bt! >= 198 && bt! < 500, `b fired at ${bt} ms`);
    assert.equal(a.aborted && b.aborted && !c.aborted, true);
    assert.equal(a.reason?.message, 'a');
  });

  it('does not fire a deadline whose request finished, nor a removed listener', async () => {
    const queue = new DeadlineQueue();
    let calls = 0;
    const listener = () => (calls += 1);
    const done = queue.start(30, () => new Error('x'));
    done.addEventListener('abort', listener);
    queue.finish(done, 30);
    const removed = queue.start(30, () => new Error('y'));
    removed.addEventListener('abort', listener);
    removed.removeEventListener('abort', listener);
    // Different timeouts live in their own lanes and still fire in time.
    const other = queue.start(10, () => new Error('z'));
    await sleep(80);
    queue.close();
    assert.equal(calls, 0);
    assert.equal(done.aborted, false);
    assert.equal(removed.aborted, true);
    assert.equal(other.aborted, true);
  });
});
