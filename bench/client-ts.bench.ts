// Benchmark of @sluice/analytics (not a test). Run from the repo root:
//   node bench/client-ts.bench.ts [messages]
// Reports, against a local HTTP server on 127.0.0.1 (in a worker thread, so it has its own
// core) that reads and discards every request:
//   1. enqueue cost: wall time spent inside the calls, per call (validation, building,
//      serialisation, queueing);
//   2. sustained delivery: calls/s from the first call until close() resolves (all delivered);
//   3. raw ceiling: the same messages, pre-serialised into full batches, posted straight to the
//      server with the same HTTP client (undici transport) and concurrency (maxInFlight);
// and the ratio of 2 to 3.
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import {
  Analytics,
  BATCH_BODY_OVERHEAD_BYTES,
  DEFAULT_MAX_IN_FLIGHT,
  createUndiciTransport,
  nextBatchSize,
  renderBatchBody,
} from '@sluice/analytics';
import { buildMessage } from '../packages/client/src/build-message.ts';

const MESSAGES = Number(process.argv[2] ?? 200_000);
const CHUNK = 1_000; // calls between two yields to the event loop: a busy producer
const ROUNDS = 3;

const SERVER = `
  const { createServer } = require('node:http');
  const { parentPort } = require('node:worker_threads');
  let requests = 0, bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (c) => { bytes += c.length; });
    req.on('end', () => { requests++; res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"success":true}'); });
  });
  server.keepAliveTimeout = 30000;
  server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
  parentPort.on('message', (m) => { if (m === 'stats') parentPort.postMessage({ requests, bytes }); else server.close(() => process.exit(0)); });
`;

function callFor(i: number) {
  return {
    userId: `user-${i % 5_000}`,
    event: 'Order Completed',
    properties: { orderId: `o-${i}`, total: 42.5 + (i % 100), currency: 'EUR', coupon: i % 3 === 0 ? 'WINTER' : null },
    context: { ip: '203.0.113.7' },
  };
}

async function runClient(endpoint: string, count: number): Promise<{ enqueueNsPerCall: number; callsPerSec: number }> {
  const analytics = new Analytics('bench-key', { endpoint, maxQueueSize: count });
  let inCalls = 0;
  const started = performance.now();
  for (let i = 0; i < count; i += CHUNK) {
    const t0 = performance.now();
    const end = Math.min(count, i + CHUNK);
    for (let j = i; j < end; j++) analytics.track(callFor(j));
    inCalls += performance.now() - t0;
    await yieldToLoop();
  }
  await analytics.close();
  const elapsed = performance.now() - started;
  return { enqueueNsPerCall: (inCalls * 1e6) / count, callsPerSec: count / (elapsed / 1000) };
}

async function runRaw(endpoint: string, count: number): Promise<{ callsPerSec: number; batches: number }> {
  // Pre-build, untimed: the client's own serialisation of the same calls, cut into full batches.
  const env = { now: () => Date.now(), uuid: () => crypto.randomUUID() };
  const jsons = Array.from({ length: count }, (_, i) => buildMessage('track', callFor(i), env));
  const bodies: string[] = [];
  for (let start = 0; start < jsons.length; ) {
    const n = nextBatchSize(jsons, BATCH_BODY_OVERHEAD_BYTES, undefined, start);
    bodies.push(
      renderBatchBody(
        jsons.slice(start, start + n).map((m) => m.json),
        new Date().toISOString(),
      ),
    );
    start += n;
  }
  const transport = createUndiciTransport({ connections: DEFAULT_MAX_IN_FLIGHT });
  const headers = {
    authorization: `Basic ${Buffer.from('bench-key:').toString('base64')}`,
    'content-type': 'application/json',
  };
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: DEFAULT_MAX_IN_FLIGHT }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        const res = await transport.send({ url: `${endpoint}/v1/batch`, headers, body, timeoutMs: 15_000 });
        if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      }
    }),
  );
  const elapsed = performance.now() - started;
  await transport.close();
  return { callsPerSec: count / (elapsed / 1000), batches: bodies.length };
}

async function main(): Promise<void> {
  const worker = new Worker(SERVER, { eval: true });
  const [{ port }] = (await once(worker, 'message')) as [{ port: number }];
  const endpoint = `http://127.0.0.1:${port}`;
  const benchStarted = performance.now();

  await runClient(endpoint, 20_000); // warm-up (JIT, connections)
  await runRaw(endpoint, 20_000);

  console.log(
    `@sluice/analytics bench: ${MESSAGES} track calls per round, ${ROUNDS} rounds, maxInFlight ${DEFAULT_MAX_IN_FLIGHT}, flushAt 20`,
  );
  const ratios: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const client = await runClient(endpoint, MESSAGES);
    const raw = await runRaw(endpoint, MESSAGES);
    const ratio = client.callsPerSec / raw.callsPerSec;
    ratios.push(ratio);
    console.log(
      `round ${round}: enqueue ${client.enqueueNsPerCall.toFixed(0)} ns/call | client delivered ${client.callsPerSec.toFixed(0)} calls/s | ` +
        `raw ceiling ${raw.callsPerSec.toFixed(0)} calls/s (${raw.batches} pre-built batches) | ratio ${ratio.toFixed(2)}`,
    );
  }
  worker.postMessage('stats');
  const [stats] = (await once(worker, 'message')) as [{ requests: number; bytes: number }];
  worker.postMessage('stop');
  await once(worker, 'exit');
  ratios.sort((a, b) => a - b);
  console.log(
    `median ratio client/raw: ${ratios[Math.floor(ratios.length / 2)]!.toFixed(2)}; server saw ${stats.requests} requests, ` +
      `${(stats.bytes / 1e6).toFixed(1)} MB; total ${((performance.now() - benchStarted) / 1000).toFixed(1)} s`,
  );
}

await main();
