import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backoffDelay } from '../src/backoff.ts';

const settings = { minDelayMs: 100, maxDelayMs: 10_000 };

describe('backoffDelay', () => {
  it('doubles per retry, from half to all of the nominal delay', () => {
    const table: Array<[number, number]> = [
      [0, 100],
      [1, 200],
      [2, 400],
      [3, 800],
      [6, 6_400],
      [7, 10_000],
      [50, 10_000],
    ];
    for (const [retry, nominal] of table) {
      assert.equal(
        backoffDelay(retry, settings, () => 0),
        nominal / 2,
        `retry ${retry}, low`,
      );
      assert.equal(
        backoffDelay(retry, settings, () => 0.999_999_9),
        nominal,
        `retry ${retry}, high`,
      );
    }
  });

  it('jitters: different random draws give different delays within bounds', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 50; i++) {
      const d = backoffDelay(3, settings);
      assert.ok(d >= 400 && d <= 800, `${d}`);
      seen.add(d);
    }
    assert.ok(seen.size > 5);
  });
});
