import { Pool } from 'undici';

export interface LoadResult {
  requests: number;
  failures: number;
  events: number;
  seconds: number;
  latenciesMs: number[];
}

/** Posts `body` to `url` from `connections` keep-alive connections for `seconds`, counting 200s. */
export async function runHttpLoad(options: {
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: () => Buffer;
  callsPerRequest: number;
  connections: number;
  seconds: number;
}): Promise<LoadResult> {
  const pool = new Pool(options.origin, { connections: options.connections, pipelining: 1, keepAliveTimeout: 30_000 });
  const latenciesMs: number[] = [];
  let requests = 0;
  let failures = 0;
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        const res = await pool.request({
          method: 'POST',
          path: options.path,
          headers: options.headers,
          body: options.body(),
        });
        await res.body.dump();
        if (res.statusCode === 200) {
          requests += 1;
          latenciesMs.push(performance.now() - t0);
        } else failures += 1;
      } catch {
        failures += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: options.connections }, worker));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return { requests, failures, events: requests * options.callsPerRequest, seconds, latenciesMs };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
