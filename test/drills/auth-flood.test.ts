// Drill: 1,000 wrong tokens from one client, 64 at a time as fast as it is answered, against the real
// delivery log (its own process, real Kafka) → the hostile client is answered 429 past its burst of
// failures (each held up to a second), and a valid client on another address, measured while the
// flood runs, keeps its latency: p99 within max(2 × idle p99, idle p99 + 20 ms)
// (docs/reference/tokens.md, "Proven under attack").
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { Agent, request } from 'undici';
import { DELIVERY_LOG_TOKEN, Pipeline } from '../support/pipeline.ts';
import type { FloodOrder, FloodReport } from '../support/wrong-token-flood.ts';

const WRONG_TOKENS = 1_000;
const FLOOD_CONCURRENCY = 64;
const IDLE_REQUESTS = 500;
const WARM_UP = 500;
/** Fewest requests of the valid client the flood must overlap for its p99 to mean anything. */
const MIN_SAMPLES = 50;
/** The failed-authentication bucket (docs/reference/tokens.md): 10, refilled one every 6 s. */
const BURST = 10;
const REFILL_MS = 6_000;
/**
 * Below a few milliseconds a scheduler hiccup alone doubles a p99, so the bound is 2 × idle or idle
 * plus this, whichever is larger.
 */
const FLOOR_MS = 20;
/** The two clients: distinct loopback addresses (Linux routes all of 127/8 to lo), so distinct buckets. */
const VALID_ADDRESS = '127.0.0.2';
const HOSTILE_ADDRESS = '127.0.0.3';

let pipeline: Pipeline | undefined;
after(() => pipeline?.close());

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * q) - 1]!;
const p50 = (xs: number[]) => quantile(xs, 0.5);
const p99 = (xs: number[]) => quantile(xs, 0.99);

it(`${WRONG_TOKENS} wrong tokens from one client are answered 429 past its burst and do not slow a valid client`, async (t) => {
  pipeline = await Pipeline.start({ endpoints: [() => ({ status: 200 })], services: ['delivery-log'] });
  const url = `${pipeline.service('delivery-log').url}/api/v1/ledger/unaccounted?limit=1`;
  const agent = new Agent({ connections: 1, connect: { localAddress: VALID_ADDRESS } });
  const valid = async () => {
    const started = performance.now();
    const res = await request(url, { dispatcher: agent, headers: { authorization: `Bearer ${DELIVERY_LOG_TOKEN}` } });
    await res.body.dump();
    assert.equal(res.statusCode, 200, 'a valid token is never held back');
    return performance.now() - started;
  };
  try {
    for (let i = 0; i < WARM_UP; i++) await valid();
    // Idle before the flood and again after it (A-B-A), so a stretch of the service's own start-up
    // work or of the machine's other load does not fall on one side only.
    const before: number[] = [];
    for (let i = 0; i < IDLE_REQUESTS; i++) before.push(await valid());

    const order: FloodOrder = {
      url,
      localAddress: HOSTILE_ADDRESS,
      count: WRONG_TOKENS,
      concurrency: FLOOD_CONCURRENCY,
    };
    const flood = new Worker(new URL('../support/wrong-token-flood.ts', import.meta.url), { workerData: order });
    await once(flood, 'message'); // started
    const done = once(flood, 'message') as Promise<[FloodReport]>;
    let flooding = true;
    void done.then(() => {
      flooding = false;
    });
    // The valid client's requests made while the flood runs, one after another.
    const attacked: number[] = [];
    while (flooding) attacked.push(await valid());
    const [report] = await done;
    await flood.terminate();
    const afterwards: number[] = [];
    for (let i = 0; i < IDLE_REQUESTS; i++) afterwards.push(await valid());
    const idle = [...before, ...afterwards];
    const idleP99 = p99(idle);
    const attackedP99 = p99(attacked);
    const bound = Math.max(2 * idleP99, idleP99 + FLOOR_MS);
    const { 401: unauthorized = 0, 429: limited = 0, ...other } = report.statuses;
    const sent = Object.values(report.statuses).reduce((a, b) => a + b, 0);
    t.diagnostic(
      `idle p50 ${p50(idle).toFixed(2)} ms, p99 ${idleP99.toFixed(2)} ms (${idle.length} requests; p99 before ` +
        `${p99(before).toFixed(2)} ms, after ${p99(afterwards).toFixed(2)} ms); ` +
        `under the flood p50 ${p50(attacked).toFixed(2)} ms, p99 ${attackedP99.toFixed(2)} ms ` +
        `(${attacked.length} requests), bound ${bound.toFixed(2)} ms; flood of ${sent} wrong tokens, ${FLOOD_CONCURRENCY} at a time, in ` +
        `${report.elapsedMs.toFixed(0)} ms (${((sent / report.elapsedMs) * 1_000).toFixed(0)}/s): ` +
        `401 × ${unauthorized}, 429 × ${limited}`,
    );
    assert.equal(sent, WRONG_TOKENS);
    assert.ok(attacked.length >= MIN_SAMPLES, `only ${attacked.length} requests measured during the flood`);
    assert.deepEqual(other, {}, 'every wrong token is answered 401 or 429');
    // The burst, plus one for each refill the flood lasted long enough to see.
    const allowed = BURST + Math.floor(report.elapsedMs / REFILL_MS);
    assert.ok(unauthorized >= BURST && unauthorized <= allowed, `${unauthorized} answered 401`);
    assert.equal(limited, sent - unauthorized);
    assert.ok(attackedP99 <= bound, `p99 under the flood ${attackedP99.toFixed(2)} ms > ${bound.toFixed(2)} ms`);
  } finally {
    await agent.close();
  }
});
