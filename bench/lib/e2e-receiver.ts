/**
 * The end-to-end benchmark's webhook receiver, in its own process: answers 200 at once and keeps
 * the arrival time of every event — the X-Message-Id of a single request, every id of a batch
 * (`messageIds` of the body, docs/reference/batches.md); hands them over IPC on request. Told
 * `{ cmd: 'fail', rate }`, it answers 503 to that seeded random share of requests instead (their
 * events not kept), as the ordering benchmark's failing phases need.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { seededRandom } from '../../test/support/order-receiver.ts';

let arrivals = new Map<string, number>();
let total = 0;
let requests = 0;
let failRate = 0;
const random = seededRandom(1);
const arrived = (id: string, at: number) => {
  if (!arrivals.has(id)) arrivals.set(id, at);
  total += 1;
};
const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
  const batched = req.headers['x-batch-id'] !== undefined;
  const chunks: Buffer[] = [];
  if (batched) req.on('data', (c: Buffer) => chunks.push(c));
  else req.resume();
  req.on('end', () => {
    const at = performance.timeOrigin + performance.now();
    requests += 1;
    if (failRate > 0 && random() < failRate) {
      res.writeHead(503, { 'content-type': 'text/plain', 'content-length': '4' });
      res.end('fail');
      return;
    }
    if (batched) {
      const { messageIds } = JSON.parse(Buffer.concat(chunks).toString()) as { messageIds: string[] };
      for (const id of messageIds) arrived(id, at);
    } else {
      const id = req.headers['x-message-id'];
      if (typeof id === 'string') arrived(id, at);
    }
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  });
});
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
process.on('message', (msg: { cmd: string }) => {
  if (msg.cmd === 'count') process.send!({ count: arrivals.size, total, requests });
  if (msg.cmd === 'dump') process.send!({ arrivals: [...arrivals] });
  if (msg.cmd === 'fail') {
    failRate = (msg as { rate?: number }).rate ?? 0;
    process.send!({ fail: failRate });
  }
  if (msg.cmd === 'reset') {
    arrivals = new Map();
    total = 0;
    requests = 0;
    process.send!({ reset: true });
  }
});
process.on('disconnect', () => process.exit(0));
