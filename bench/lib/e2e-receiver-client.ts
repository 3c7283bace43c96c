import { fork } from 'node:child_process';

/**
 * The end-to-end receiver (`e2e-receiver.ts`) started in its own process, and its questions over
 * IPC: events kept so far, their arrival times, a reset, the share of requests to answer 503.
 */
export async function startE2eReceiver() {
  const child = fork(new URL('./e2e-receiver.ts', import.meta.url), [], { execArgv: [] });
  const { port } = await new Promise<{ port: number }>((resolve) => child.once('message', resolve as never));
  const ask = <T>(msg: Record<string, unknown>, key: string) =>
    new Promise<T>((resolve) => {
      const listener = (answer: Record<string, unknown>) => {
        if (!(key in answer)) return;
        child.off('message', listener);
        resolve(answer as T);
      };
      child.on('message', listener);
      child.send(msg);
    });
  const counts = () => ask<{ count: number; requests: number }>({ cmd: 'count' }, 'count');
  return {
    port,
    pid: child.pid!,
    counts,
    arrivals: async () => (await ask<{ arrivals: [string, number][] }>({ cmd: 'dump' }, 'arrivals')).arrivals,
    reset: () => ask({ cmd: 'reset' }, 'reset'),
    failShare: (rate: number) => ask({ cmd: 'fail', rate }, 'fail'),
    /** Polls until `n` events were kept or `timeoutMs` passed; resolves with the count. */
    delivered: async (n: number, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const { count } = await counts();
        if (count >= n || Date.now() > deadline) return count;
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    stop: () => child.kill(),
  };
}
