// Drill: an endpoint with `maxRequestsPerSecond` gets a burst far over its rate → every event
// delivered once, never faster than the rate allows (a burst of one second's worth, then the rate).
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, it } from 'node:test';
import { formatSummary } from '../support/ledger.ts';
import { Pipeline } from '../support/pipeline.ts';

const RATE = 40;
const EVENTS = 240;

let pipeline: Pipeline | undefined;
after(() => pipeline?.close());

/** The most requests any stretch of the arrivals held beyond what the bucket allows (≤ 0 when obeyed). */
function worstExcess(times: number[], rate: number, slackMs: number): { excess: number; at: string } {
  const sorted = [...times].sort((a, b) => a - b);
  let worst = { excess: Number.NEGATIVE_INFINITY, at: '' };
  for (let i = 0; i < sorted.length; i += 1)
    for (let j = i; j < sorted.length; j += 1) {
      const allowed = rate + (rate * (sorted[j]! - sorted[i]! + slackMs)) / 1_000;
      const excess = j - i + 1 - Math.floor(allowed);
      if (excess > worst.excess) worst = { excess, at: `${j - i + 1} requests in ${sorted[j]! - sorted[i]!} ms` };
    }
  return worst;
}

it(`an endpoint limited to ${RATE} requests/s gets all ${EVENTS} events of a burst, never over its rate`, async (t) => {
  pipeline = await Pipeline.start({
    endpoints: [() => ({ status: 200 })],
    endpointSettings: { maxRequestsPerSecond: RATE },
    config: { retry: { window: '60s', schedule: ['1s', '2s'], tiers: ['1s', '2s'] } },
  });
  // The receiver runs on this process's event loop: a request is stamped when the loop gets to it,
  // so a stall of the loop stamps requests that came apart as if together. Its longest stall is
  // added to the slack below (measured, not guessed).
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const started = Date.now();
  const { acked } = await pipeline.send(EVENTS, { batchSize: 80 });
  assert.equal(acked, EVENTS);
  await pipeline.settle(45_000);
  const took = Date.now() - started;
  const summary = pipeline.ledger.summary();
  t.diagnostic(`${formatSummary('rate-limited', summary)}; ${took} ms`);
  assert.deepEqual(pipeline.unexpectedExits(), [], 'no service exited by itself');
  assert.equal(summary.lost, 0);
  assert.equal(summary.delivered, EVENTS);
  assert.equal(summary.deadLettered, 0);
  assert.equal(summary.duplicates, 0);
  loop.disable();
  const stallMs = Math.ceil(loop.max / 1e6);
  const times = pipeline.ledger.arrivals.map((a) => a.at);
  // 20 ms of slack per stretch (the bucket counts at the deliverer, the receiver notes arrival),
  // plus the receiver's longest event-loop stall during the run.
  const worst = worstExcess(times, RATE, 20 + stallMs);
  assert.ok(worst.excess <= 0, `over the rate: ${worst.at} (receiver's longest stall ${stallMs} ms)`);
  // The burst really was held back: at the rate, the last event cannot arrive before
  // (EVENTS − RATE) / RATE seconds after the first.
  const span = Math.max(...times) - Math.min(...times);
  assert.ok(span >= ((EVENTS - RATE) / RATE) * 1_000 - 100, `all arrived within ${span} ms`);
});
