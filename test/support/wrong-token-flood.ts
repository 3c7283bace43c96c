// A hostile client on its own thread (so its requests do not hold up the measuring client's event
// loop): `count` requests with wrong bearer tokens from one loopback address, `concurrency` at a
// time, as fast as the delivery log answers; posts back how each was answered.
import { randomBytes } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { Agent, request } from 'undici';

/** What the flood is told: where to send, from which address, how many and how many at once. */
export interface FloodOrder {
  url: string;
  localAddress: string;
  count: number;
  concurrency: number;
}

/** What the flood reports: the answers by status, and how long it took. */
export interface FloodReport {
  statuses: Record<string, number>;
  elapsedMs: number;
}

const order = workerData as FloodOrder;
const agent = new Agent({ connections: order.concurrency, connect: { localAddress: order.localAddress } });
const statuses: Record<string, number> = {};
let next = 0;

async function sender(): Promise<void> {
  while (next < order.count) {
    next += 1;
    const res = await request(order.url, {
      dispatcher: agent,
      headers: { authorization: `Bearer slt_${randomBytes(32).toString('base64url')}` },
    });
    await res.body.dump();
    statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
  }
}

parentPort!.postMessage({ started: true });
const started = performance.now();
await Promise.all(Array.from({ length: order.concurrency }, sender));
const report: FloodReport = { statuses, elapsedMs: performance.now() - started };
await agent.close();
parentPort!.postMessage(report);
parentPort!.close();
