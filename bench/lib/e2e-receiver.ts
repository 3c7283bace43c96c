/**
 * The end-to-end benchmark's webhook receiver, in its own process: answers 200 at once and keeps
 * the arrival time of every X-Message-Id; hands them over IPC on request.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

let arrivals = new Map<string, number>();
let total = 0;
const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
  req.resume();
  req.on('end', () => {
    const id = req.headers['x-message-id'];
    if (typeof id === 'string' && !arrivals.has(id)) arrivals.set(id, performance.timeOrigin + performance.now());
    total += 1;
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  });
});
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
process.on('message', (msg: { cmd: string }) => {
  if (msg.cmd === 'count') process.send!({ count: arrivals.size, total });
  if (msg.cmd === 'dump') process.send!({ arrivals: [...arrivals] });
  if (msg.cmd === 'reset') {
    arrivals = new Map();
    total = 0;
    process.send!({ reset: true });
  }
});
process.on('disconnect', () => process.exit(0));
