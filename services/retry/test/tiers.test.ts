import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HOP_ALLOWANCE_MS } from '../src/constants.ts';
import { chooseTier, eligibleAt, finalHoldMs, normaliseTiers, place, tierFetchWaitMs } from '../src/domain/tiers.ts';

const tiers = [10_000, 30_000, 60_000, 3_600_000];
const A = 500; // hop allowance

describe('delay tiers (docs/reference/retries.md)', () => {
  const rows: [remaining: number, tier: number][] = [
    [1, 10_000],
    [9_999, 10_000],
    [10_000, 10_000],
    [29_999, 10_000],
    [30_000, 10_000],
    [30_499, 10_000],
    [30_500, 30_000],
    [60_499, 30_000],
    [60_500, 60_000],
    [3_600_499, 60_000],
    [3_600_500, 3_600_000],
    [14_400_000, 3_600_000],
  ];
  for (const [remaining, tier] of rows) {
    it(`remaining ${remaining} ms rides the ${tier} ms tier`, () =>
      assert.equal(chooseTier(tiers, remaining, A), tier));
  }

  it('a delay tier is only taken with the hop allowance left after its span', () => {
    for (let remaining = 1; remaining < 4_000_000; remaining += 777) {
      const tier = chooseTier(tiers, remaining, A);
      if (tier !== tiers[0]) assert.ok(remaining - tier >= A, `${remaining} → ${tier}`);
      else assert.ok(remaining < finalHoldMs(tiers, A), `${remaining} fits the final tier's hold`);
    }
  });

  it('the final tier holds up to the next span plus the allowance; one tier alone holds its own span', () => {
    assert.equal(finalHoldMs(tiers, A), 30_500);
    assert.equal(finalHoldMs([10_000], A), 10_500);
  });

  it('a record leaves its tier at the span end, or at its due time if that is sooner', () => {
    assert.equal(eligibleAt(1_000, 10_000, 50_000), 11_000);
    assert.equal(eligibleAt(1_000, 10_000, 4_000), 4_000);
  });

  it('forwards only at or after the due time', () => {
    assert.deepEqual(place(tiers, 5_000, 5_000, A), { kind: 'forward' });
    assert.deepEqual(place(tiers, 5_000, 5_001, A), { kind: 'forward' });
    assert.deepEqual(place(tiers, 5_000, 4_999, A), { kind: 'tier', tierMs: 10_000 });
    assert.deepEqual(place(tiers, 100_000, 0, A), { kind: 'tier', tierMs: 60_000 });
  });

  it("a delay tier's fetch wait: 1/80 of its span, 50–250 ms, at most half the hop allowance", () => {
    const rows: [tierMs: number, waitMs: number][] = [
      [100, 50],
      [2_000, 50],
      [4_000, 50],
      [8_000, 100],
      [16_000, 200],
      [30_000, 250],
      [3_600_000, 250],
    ];
    for (const [tierMs, waitMs] of rows) assert.equal(tierFetchWaitMs(tierMs), waitMs, `tier ${tierMs} ms`);
    assert.ok(tierFetchWaitMs(Number.MAX_SAFE_INTEGER) <= HOP_ALLOWANCE_MS / 2);
  });

  it('sorts and de-duplicates the configured tiers', () =>
    assert.deepEqual(normaliseTiers([30, 10, 30, 20]), [10, 20, 30]));
});
