// Drill 4: an endpoint answers 5xx for a while, then recovers → 100 % delivered.
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { Pipeline } from '../support/pipeline.ts';

let pipeline: Pipeline | undefined;
after(() => pipeline?.close());

it('an endpoint failing with 503 for 4 s then recovering gets every event; nothing lost or dead-lettered', async (t) => {
  const recoverAt = Date.now() + 4_000 + 15_000; // services take a while to start; adjusted below
  let failUntil = recoverAt;
  pipeline = await Pipeline.start({
    endpoints: [() => (Date.now() < failUntil ? { status: 503 } : { status: 200 })],
    config: { retry: { window: '60s', schedule: ['1s', '2s'], tiers: ['1s', '2s'] }, delivery: { timeout: '2s' } },
  });
  failUntil = Date.now() + 4_000;
  const { acked } = await pipeline.send(1_000, { batchSize: 50 });
  assert.equal(acked, 1_000);
  await pipeline.settle(45_000);
  await pipeline.collectDeadLetters(0, 2_000);
  const summary = pipeline.report(t, 'endpoint-recovers');
  assert.equal(summary.lost, 0);
  assert.equal(summary.delivered, 1_000);
  assert.equal(summary.deadLettered, 0);
  assert.equal(summary.duplicates, 0, 'each event accepted by the endpoint once');
  assert.equal(summary.badSignatures, 0);
  assert.equal(summary.badBodies, 0);
  assert.ok(
    pipeline.ledger.arrivals.some((a) => a.status === 503),
    'the outage was real',
  );
});
