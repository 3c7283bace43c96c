// Drill 1 (long): kill -9 the deliverer 5 times during a 100,000-event run → 0 lost.
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { sleep } from '@sluice/testkit';
import { formatSummary } from '../support/ledger.ts';
import { Pipeline } from '../support/pipeline.ts';

const EVENTS = Number(process.env.DRILL_EVENTS ?? 100_000);
let pipeline: Pipeline | undefined;
after(() => pipeline?.close());

it(`kill -9 the deliverer 5 times during ${EVENTS} events: lost = 0, duplicates only around the kills`, async (t) => {
  pipeline = await Pipeline.start({ endpoints: [() => ({ status: 200 })], partitions: 6 });
  const sending = pipeline.send(EVENTS, { batchSize: 100, concurrency: 8 });
  const deliverer = pipeline.service('deliverer');
  for (let kill = 1; kill <= 5; kill++) {
    await sleep(3_000 + Math.random() * 2_000);
    const from = Date.now();
    await deliverer.kill9();
    t.diagnostic(`kill -9 #${kill} after ${pipeline.ledger.arrivals.length} arrivals`);
    await sleep(500);
    await deliverer.start();
    pipeline.ledger.disruption(`kill -9 #${kill}`, from, Date.now());
  }
  const { acked } = await sending;
  assert.equal(acked, EVENTS);
  await pipeline.settle(180_000);
  const summary = pipeline.ledger.summary(35_000);
  t.diagnostic(formatSummary('kill9-deliverer', summary));
  console.log(formatSummary('kill9-deliverer', summary));
  assert.equal(summary.lost, 0);
  assert.equal(summary.delivered, EVENTS);
  assert.equal(summary.badSignatures, 0);
  assert.equal(summary.badBodies, 0);
});
