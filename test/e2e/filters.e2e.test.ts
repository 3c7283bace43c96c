import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { metricSum, scrapeMetrics, uniqueName, waitUntil } from '@sluice/testkit';
import { Pipeline } from '../support/pipeline.ts';

/**
 * Filters end to end (docs/reference/filters.md): ingest, deliverer and delivery log as processes
 * on the real broker, 1,000 calls of mixed types and names, one destination with a filter of every
 * kind (types, names with a wildcard, nested where). Exactly the calls the filter accepts reach the
 * endpoint; every other one is `filtered` in the log, with no attempt.
 */
const COUNT = 1_000;
const TRACK_NAMES = ['Order Completed', 'Order Refunded', 'Signed Up', 'Cart Viewed'];

const FILTER = {
  types: ['track', 'identify'],
  events: ['Order *', 'Signed Up'],
  where: {
    any: [
      {
        all: [
          { field: 'type', equals: 'identify' },
          { field: 'traits.plan', equals: 'pro' },
        ],
      },
      { all: [{ field: 'properties.total', gte: 100 }, { not: { field: 'properties.currency', equals: 'EUR' } }] },
      { field: 'event', equals: 'Signed Up' },
    ],
  },
};

type Call = Record<string, any>;

function call(run: string, i: number): Call {
  const base = { messageId: `${run}-${i}`, userId: `u-${i % 13}` };
  if (i % 5 === 0) return { ...base, type: 'identify', traits: { plan: i % 10 === 0 ? 'pro' : 'free' } };
  if (i % 5 === 1) return { ...base, type: 'page', name: 'Home' };
  const properties = { total: i % 250, currency: i % 3 === 0 ? 'EUR' : 'USD' };
  return { ...base, type: 'track', event: TRACK_NAMES[i % 4], properties };
}

/** The filter above, written out by hand: the test's own oracle, not the evaluator under test. */
function wanted(c: Call): boolean {
  if (c.type === 'identify') return c.traits.plan === 'pro';
  if (c.type !== 'track') return false;
  if (c.event === 'Signed Up') return true;
  if (!c.event.startsWith('Order ')) return false;
  return c.properties.total >= 100 && c.properties.currency !== 'EUR';
}

describe('filters end to end', { timeout: 240_000 }, () => {
  let pipeline: Pipeline;
  const run = uniqueName('flt');
  const received: string[] = [];

  before(async () => {
    pipeline = await Pipeline.start({
      endpoints: [
        (req) => {
          received.push(String(req.headers['x-message-id']));
          return { status: 200, body: 'ok' };
        },
      ],
      services: ['delivery-log', 'deliverer', 'ingest'],
      partitions: 2,
      filter: FILTER,
    });
  });
  after(async () => {
    await pipeline?.close();
  });

  it('1,000 mixed calls: exactly the matching ones delivered, the rest filtered, none attempted', async () => {
    const calls = Array.from({ length: COUNT }, (_, i) => call(run, i));
    const deliver = new Set(calls.filter(wanted).map((c) => c.messageId as string));
    const filtered = COUNT - deliver.size;
    assert.ok(deliver.size > 150 && filtered > 150, `a mix of both: ${deliver.size} to deliver`);
    for (let i = 0; i < COUNT; i += 100) assert.equal((await pipeline.postBatch(calls.slice(i, i + 100))).status, 200);

    const states = await waitUntil(
      async () => {
        const res = await pipeline.deliveryLog('/api/v1/destinations');
        const d = res.body.destinations.find((x: { id: string }) => x.id === 'ledger-hooks');
        const s = d?.states ?? {};
        return (s.delivered ?? 0) + (s.filtered ?? 0) >= COUNT ? s : undefined;
      },
      120_000,
      'every call delivered or filtered in the delivery log',
    );
    assert.deepEqual(states, { delivered: deliver.size, filtered });

    assert.equal(received.length, deliver.size, 'one request per delivered call, none for a filtered one');
    assert.deepEqual(new Set(received), deliver);

    const metrics = await scrapeMetrics(pipeline.service('deliverer').port);
    assert.equal(metricSum(metrics, 'sluice_deliverer_filtered_total'), filtered);
    assert.equal(metricSum(metrics, 'sluice_deliverer_attempts_total'), deliver.size);

    // One filtered call of each type in the log: its state, and no attempt.
    for (const i of [1, 5, 3, 7]) {
      const id = `${run}-${i}`;
      assert.ok(!deliver.has(id), `${id} is one the filter refuses`);
      const m = (await pipeline.deliveryLog(`/api/v1/messages/ledger/${id}`)).body;
      assert.deepEqual(
        m.deliveries.map((d: { state: string; attempts: number }) => [d.state, d.attempts]),
        [['filtered', 0]],
      );
      assert.deepEqual(m.attempts, []);
    }
    const page = (await pipeline.deliveryLog('/api/v1/messages?state=filtered&destinationId=ledger-hooks&limit=5'))
      .body;
    assert.equal(page.messages.length, 5);
  });
});
