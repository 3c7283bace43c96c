// Drill 6: one of five URLs down → the others get each event exactly once.
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { sleep } from '@sluice/testkit';
import { Pipeline } from '../support/pipeline.ts';

let pipeline: Pipeline | undefined;
after(() => pipeline?.close());

it('four healthy endpoints each get every event exactly once; nothing is retried', async (t) => {
  pipeline = await Pipeline.start({ endpoints: Array.from({ length: 5 }, () => () => ({ status: 200 })) });
  const down = pipeline.receivers[4]!;
  await down.close(); // connection refused from now on
  const { acked } = await pipeline.send(1_000, { batchSize: 50 });
  assert.equal(acked, 1_000);
  await pipeline.settle(30_000);
  await sleep(3_000); // a retry (which must not happen) would show up here
  const summary = pipeline.report(t, 'one-endpoint-down');
  assert.equal(summary.lost, 0);
  for (const r of pipeline.receivers.slice(0, 4)) {
    const ids: string[] = pipeline.ledger.arrivals.filter((a) => a.endpoint === r.url).map((a) => a.messageId);
    assert.equal(ids.length, 1_000, `${r.url} got ${ids.length}`);
    assert.equal(new Set(ids).size, 1_000, `${r.url}: exactly once`);
  }
  assert.equal(summary.badSignatures, 0);
});
