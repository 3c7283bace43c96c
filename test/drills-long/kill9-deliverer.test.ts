// Long drill: kill -9 the deliverer 5 times during a 100,000-event run → 0 lost, at a destination
// sent one webhook per event and at one beside it sent batches (docs/reference/batches.md). The
// delivery log runs beside the pipeline, and its ledger agrees with the drill's at the end
// (docs/delivery-log.md, "Ledger").
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { sleep, waitUntil } from '@sluice/testkit';
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
    services: ['ingest', 'deliverer', 'retry', 'delivery-log'],
    // No size cap: the log keeps every event of the run, so its ledger can be compared whole.
    config: { deliveryLog: { maxSizeBytes: 0 } },
  });
  const started = Date.now() - 60_000;
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

  // The delivery log's ledger and the drill's agree per destination, once the log has read
  // everything: accepted = delivered + dead + in flight on both sides, with the same numbers.
  const drill = Object.fromEntries(pipeline.ledger.accounts());
  let log: Record<string, unknown> = {};
  await waitUntil(
    async () => {
      log = Object.fromEntries(await pipeline!.deliveryLogAccounts(started));
      return isDeepStrictEqual(log, drill);
    },
    240_000,
    'the delivery log has read the whole run',
  ).catch(() => undefined);
  console.log(`ledger[kill9-deliverer] drill=${JSON.stringify(drill)} deliveryLog=${JSON.stringify(log)}`);
  for (const a of Object.values(drill)) assert.equal(a.accepted, a.delivered + a.dead + a.inFlight);
  assert.deepEqual(log, drill);
});
