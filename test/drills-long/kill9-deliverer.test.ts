// Long drill: kill -9 the deliverer 5 times during a 100,000-event run → 0 lost, at a destination
// sent one webhook per event and at one beside it sent batches (docs/reference/batches.md).
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { sleep } from '@sluice/testkit';
import { formatSummary } from '../support/ledger.ts';
import { Pipeline } from '../support/pipeline.ts';

const EVENTS = Number(process.env.DRILL_EVENTS ?? 100_000);
let pipeline: Pipeline | undefined;
after(async () => {
  await pipeline?.close();
  pipeline = undefined;
});

it(`kill -9 the deliverer 5 times during ${EVENTS} events to a destination and a batched one: lost = 0, duplicates only around the kills`, async (t) => {
  pipeline = await Pipeline.start({
    endpoints: [() => ({ status: 200 })],
    partitions: 6,
    batchedBeside: { maxEvents: 100, maxWait: '50ms' },
  });
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
  // Only the kills may end a process: a service that exited by itself explains what follows.
  assert.deepEqual(pipeline.unexpectedExits(), [], 'no service exited by itself');
  assert.equal(summary.lost, 0);
  assert.equal(summary.delivered, EVENTS);
  assert.equal(summary.badSignatures, 0);
  assert.equal(summary.badBodies, 0);
});
