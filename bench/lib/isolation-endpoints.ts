/**
 * The isolation benchmark's endpoints, in their own process so they do not share the event loop
 * with what is measured: a healthy receiver (answers 200 at once and notes when each message id
 * arrived), an always-500 receiver, a slow receiver (answers 200 after BENCH_SLOW_MS, default
 * 400 ms) and a black hole (accepts connections, reads, never answers).
 * Reports {healthy, failing, slow, blackHole} ports over IPC; `receipts` sends the healthy arrivals.
 */
import { createServer } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

let ids: string[] = [];
let at: number[] = [];
const healthy = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
  req.resume();
  req.on('end', () => {
    ids.push(String(req.headers['x-message-id']));
    at.push(performance.timeOrigin + performance.now());
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  });
});
const failing = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(500, { 'content-type': 'text/plain', 'content-length': '4' });
    res.end('boom');
  });
});
const SLOW_MS = Number(process.env.BENCH_SLOW_MS ?? 400);
let slowAnswered = 0;
const slow = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
  req.resume();
  req.on('end', () => {
    setTimeout(() => {
      slowAnswered += 1;
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      res.end('ok');
    }, SLOW_MS);
  });
});
const sockets = new Set<Socket>();
const blackHole = createTcpServer((socket) => {
  sockets.add(socket);
  socket.on('data', () => undefined);
  socket.on('error', () => undefined);
  socket.on('close', () => sockets.delete(socket));
});

const listen = (server: { listen: (port: number, host: string, cb: () => void) => void; address: () => unknown }) =>
  new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );

const ports = {
  healthy: await listen(healthy),
  failing: await listen(failing),
  slow: await listen(slow),
  blackHole: await listen(blackHole),
};
process.send!(ports);
process.on('message', (msg: { cmd: string }) => {
  if (msg.cmd === 'receipts') process.send!({ ids, at });
  if (msg.cmd === 'count') process.send!({ count: ids.length, slow: slowAnswered });
  if (msg.cmd === 'reset') {
    ids = [];
    at = [];
    slowAnswered = 0;
    for (const s of sockets) s.destroy();
    process.send!({ reset: true });
  }
  if (msg.cmd === 'exit') process.exit(0);
});
process.on('disconnect', () => process.exit(0));
