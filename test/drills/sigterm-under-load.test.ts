// Drill 2: SIGTERM under load → the deliverer exits within 25 s and nothing is lost.
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { sleep, waitUntil } from '@sluice/testkit';
import { Pipeline } from '../support/pipeline.ts';

let pipeline: Pipeline | undefined;
after(() => pipeline?.close());

it('SIGTERM mid-delivery: exit 0 within 25 s, then a new deliverer finishes the rest; lost = 0', async (t) => {
  // A slowish endpoint keeps many deliveries in flight when SIGTERM lands.
  pipeline = await Pipeline.start({ endpoints: [() => ({ status: 200, delayMs: 20 })] });
  const sending = pipeline.send(5_000, { batchSize: 100, concurrency: 4 });
  await waitUntil(() => pipeline!.ledger.arrivals.length > 500, 30_000, 'deliveries under way');
  const deliverer = pipeline.service('deliverer');
  const t0 = Date.now();
  const { code, ms } = await deliverer.sigterm();
  pipeline.ledger.disruption('SIGTERM', t0, Date.now());
  t.diagnostic(`deliverer exited ${code} after ${ms} ms`);
  assert.equal(code, 0);
  assert.ok(ms < 25_000, `took ${ms} ms`);
  const { acked } = await sending;
  assert.equal(acked, 5_000);
  await sleep(500);
  await deliverer.start();
  pipeline.ledger.disruptions[0]!.to = Date.now();
  await pipeline.settle(60_000);
  const summary = pipeline.report(t, 'sigterm-under-load');
  assert.equal(summary.lost, 0);
  assert.equal(summary.delivered, 5_000);
  assert.equal(summary.badSignatures, 0);
  assert.equal(summary.duplicates - summary.duplicatesExplained, 0, 'every duplicate falls in the shutdown window');
});
