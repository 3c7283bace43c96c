import { createServer, type Server } from 'node:net';

/**
 * `n` distinct TCP ports free on 127.0.0.1 right now, for servers started later or in another
 * process. All listeners are held open together so the ports differ; another process may still
 * take one before it is bound, so callers that can retry on another port do.
 */
export async function freePorts(n: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
    }
    return servers.map((s) => (s.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  }
}

/** One TCP port free on 127.0.0.1 right now (`freePorts(1)`). */
export async function freePort(): Promise<number> {
  return (await freePorts(1))[0]!;
}
