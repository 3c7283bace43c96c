// Drill 5: an always-5xx endpoint → each event dead-lettered exactly once at the end of the window.
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { formatSummary } from '../support/ledger.ts';
import { Pipeline } from '../support/pipeline.ts';

let pipeline: Pipeline | undefined;
after(() => pipeline?.close());

const WINDOW_MS = 6_000;

it('every event is dead-lettered exactly once, and no attempt starts after the window', async (t) => {
  pipeline = await Pipeline.start({
    endpoints: [() => ({ status: 500 })],
    config: {
      retry: { window: `${WINDOW_MS}ms`, schedule: ['1s', '2s'], tiers: ['1s', '2s'] },
      delivery: { timeout: '2s' },
    },
  });
  const { acked } = await pipeline.send(100, { batchSize: 20 });
  assert.equal(acked, 100);
  const dead = await pipeline.collectDeadLetters(100, WINDOW_MS + 20_000);
  const summary = pipeline.ledger.summary();
  t.diagnostic(formatSummary('always-failing', summary));
  console.log(formatSummary('always-failing', summary));
  assert.equal(dead.size, 100, 'every event dead-lettered');
  assert.ok(
    [...dead.values()].every((n) => n === 1),
    'exactly once each',
  );
  assert.deepEqual(pipeline.unexpectedExits(), [], 'no service exited by itself');
  assert.equal(summary.lost, 0);
  // No attempt after the window: per event, last arrival − first arrival ≤ window (+ scheduling slack).
  const byId = new Map<string, number[]>();
  for (const a of pipeline.ledger.arrivals) byId.set(a.messageId, [...(byId.get(a.messageId) ?? []), a.at]);
  for (const [id, times] of byId) {
    const span = Math.max(...times) - Math.min(...times);
    assert.ok(span <= WINDOW_MS + 2_000, `${id}: attempts spread over ${span} ms`);
    assert.ok(times.length >= 3, `${id}: only ${times.length} attempts`);
  }
});
