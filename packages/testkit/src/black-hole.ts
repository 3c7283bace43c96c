import { createServer, type Socket } from 'node:net';

export interface BlackHole {
  url: string;
  /** Connections accepted so far. */
  connections: number;
  close(): Promise<void>;
}

/** An endpoint on 127.0.0.1 that accepts connections, reads what is sent, and never answers. */
export async function startBlackHole(): Promise<BlackHole> {
  const sockets = new Set<Socket>();
  const state = { connections: 0 };
  const server = createServer((socket) => {
    state.connections += 1;
    sockets.add(socket);
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
