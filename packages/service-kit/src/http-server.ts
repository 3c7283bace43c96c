import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleOpsRequest, type OpsRoutes } from './ops-routes.ts';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export interface ServiceHttpServer {
  server: Server;
  /** The bound port (useful with port 0). */
  port: number;
  /**
   * Stops accepting connections, lets in-flight requests finish, closes idle keep-alive sockets; a
   * keep-alive connection busy at the close ends with its response (`Connection: close`), so a
   * client that keeps it busy cannot hold the server open.
   */
  close(): Promise<void>;
}

export interface HttpServerOptions {
  port: number;
  host?: string;
  ops: OpsRoutes;
  /** The service's own API; ops routes are tried first. Without it, other paths get 404. */
  handler?: RequestHandler;
  requestTimeoutMs?: number;
  headersTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
}

/** One HTTP server per service: ops routes plus the service's own API (docs/reference/operating-interface.md). */
export async function startHttpServer(options: HttpServerOptions): Promise<ServiceHttpServer> {
  const server = createServer({
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    headersTimeout: options.headersTimeoutMs ?? 10_000,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 5_000,
  });
  // Responses not yet sent, and whether the server is closing: from the close on, each response ends
  // its connection. Node's `close` only waits for busy keep-alive connections, which a client sending
  // request after request on them (an SDK's agent, a load balancer) keeps busy for ever.
  const pending = new Set<ServerResponse>();
  let closing = false;
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (closing) res.setHeader('connection', 'close');
    else {
      pending.add(res);
      res.once('close', () => pending.delete(res));
    }
    void (async () => {
      try {
        if (await handleOpsRequest(options.ops, req, res)) return;
        if (options.handler) return await options.handler(req, res);
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"success":false,"code":"not_found","message":"no such route"}');
      } catch (err) {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"success":false,"code":"internal","message":"internal error"}');
        server.emit('handlerError', err);
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        for (const res of pending) if (!res.headersSent) res.setHeader('connection', 'close');
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
