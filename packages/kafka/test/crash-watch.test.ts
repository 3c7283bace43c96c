import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { crashVerdict, DEFAULT_RERUN_BACKOFF, rerunDelayMs } from '@sluice/kafka';

describe('crash verdict (one place for every consumer)', () => {
  it('a record handler failure is fatal; any crash from the Kafka client runs the consumer again', () => {
    assert.equal(crashVerdict({ handlerFailed: true }), 'fatal');
    assert.equal(crashVerdict({ handlerFailed: false }), 'run-again');
  });

  it('re-runs back off by doubling, capped', () => {
    const delays = [1, 2, 3, 4, 5, 6, 50].map((n) => rerunDelayMs(n, DEFAULT_RERUN_BACKOFF));
    assert.deepEqual(delays, [1_000, 2_000, 4_000, 8_000, 10_000, 10_000, 10_000]);
    assert.equal(rerunDelayMs(0, { initialMs: 50, maxMs: 100 }), 50);
  });
});
