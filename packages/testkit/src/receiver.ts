import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { selfSignedCert } from './tls.ts';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** Epoch ms when the body was complete. */
  at: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before answering (to provoke timeouts). */
  delayMs?: number;
}

export type Behaviour = (req: ReceivedRequest, index: number) => Reply;

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Handler invocations, counted before the body is read (a TLS failure never gets here). */
  handlerCalls: number;
  behave(behaviour: Behaviour): void;
  /** Resolves when at least `n` requests have arrived, or rejects after `timeoutMs`. */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  tls?: boolean;
  behaviour?: Behaviour;
  path?: string;
}

/** A real webhook endpoint on 127.0.0.1 (HTTP, or HTTPS with a self-signed certificate). */
export async function startReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  let behaviour: Behaviour = options.behaviour ?? (() => ({ status: 200, body: 'ok' }));
  const requests: ReceivedRequest[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const state = { handlerCalls: 0 };
  const sockets = new Set<import('node:net').Socket>();
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    state.handlerCalls += 1;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        at: Date.now(),
      };
      const index = requests.push(received) - 1;
      for (const w of waiters.splice(0)) requests.length >= w.n ? w.resolve() : waiters.push(w);
      const reply = behaviour(received, index);
      const answer = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
        res.end(reply.body ?? '');
      };
      if (reply.delayMs) setTimeout(answer, reply.delayMs).unref();
      else answer();
    });
  };
  const server: Server = options.tls ? createHttpsServer(selfSignedCert(), onRequest) : createHttpServer(onRequest);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('secureConnection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}${options.path ?? '/hook'}`,
    port,
    requests,
    get handlerCalls() {
      return state.handlerCalls;
    },
    behave: (b) => (behaviour = b),
    waitFor: (n, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        if (requests.length >= n) return resolve(requests);
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${requests.length} of ${n} requests in ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve(requests)) });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
