/**
 * The benchmark's fast webhook receiver, run as its own process so it does not share the event
 * loop with what is measured. Answers 200 at once; reports {count, firstAt, lastAt} over IPC. `count`
 * counts events: a batch request counts its `X-Batch-Size`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

let count = 0;
let firstAt = 0;
let lastAt = 0;
const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
  req.resume();
  req.on('end', () => {
    const now = performance.timeOrigin + performance.now();
    if (count === 0) firstAt = now;
    count += Number(req.headers['x-batch-size'] ?? 1);
    lastAt = now;
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  });
});
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
process.on('message', (msg: { cmd: string }) => {
  if (msg.cmd === 'stats') process.send!({ count, firstAt, lastAt });
  if (msg.cmd === 'reset') {
    count = 0;
    firstAt = 0;
    lastAt = 0;
    process.send!({ reset: true });
  }
  if (msg.cmd === 'exit') server.close(() => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
