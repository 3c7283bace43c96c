import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nextBatchSize } from '../src/batch-splitter.ts';

const sized = (...bytes: number[]) => bytes.map((b) => ({ bytes: b }));

describe('nextBatchSize', () => {
  const limits = { maxBytes: 100, maxMessages: 5 };

  it('takes everything that fits, counting overhead and one comma between messages', () => {
    // 10 overhead + 30 + 1 + 30 + 1 + 28 = 100: exactly full.
    assert.equal(nextBatchSize(sized(30, 30, 28, 1), 10, limits), 3);
    assert.equal(nextBatchSize(sized(30, 30, 29), 10, limits), 2);
  });

  it('stops at the message count limit', () => {
    assert.equal(nextBatchSize(sized(1, 1, 1, 1, 1, 1, 1), 10, limits), 5);
  });

  it('starts at the given index', () => {
    assert.equal(nextBatchSize(sized(80, 30, 30, 28), 10, limits, 1), 3);
  });

  it('always takes one message, and none from an empty queue', () => {
    assert.equal(nextBatchSize(sized(500), 10, limits), 1);
    assert.equal(nextBatchSize([], 10, limits), 0);
  });

  it('never splits needlessly: the batch could not have taken the next message', () => {
    const sizes = Array.from({ length: 1_000 }, (_, i) => ({ bytes: 1_500 + ((i * 7919) % 1_000) }));
    let start = 0;
    while (start < sizes.length) {
      const n = nextBatchSize(sizes, 80, undefined, start);
      const bytes = 80 + sizes.slice(start, start + n).reduce((s, m) => s + m.bytes, 0) + (n - 1);
      assert.ok(bytes <= 500_000);
      const next = sizes[start + n];
      if (next) assert.ok(bytes + 1 + next.bytes > 500_000, 'batch could have taken the next message');
      start += n;
    }
  });
});
