// Micro-benchmark (not a test): node:http vs fastify for ingest's workload — POST of a ~60 KB
// JSON body (100 calls), body read as bytes and parsed with JSON.parse, small JSON answer; no
// Kafka. Each server runs in its own process so its CPU can be measured; the load comes from
// this process (undici, keep-alive). Run: node bench/lib/ingest-http-compare.ts
// Env: BENCH_SECONDS (per round, default 5), BENCH_CONNECTIONS (64), BENCH_ROUNDS (2).
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage } from 'node:http';
import { fileURLToPath } from 'node:url';
import { formatCpu, startCpuWindow } from './cpu-window.ts';
import { percentile, runHttpLoad } from './ingest-load.ts';
import { benchBatch } from './ingest-payload.ts';

const ANSWER = '{"success":true,"accepted":100}';

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function serve(kind: string): Promise<void> {
  if (kind === 'node') {
    const server = createServer((req, res) => {
      void readBody(req).then((body) => {
        const parsed = JSON.parse(body.toString('utf8')) as { batch: unknown[] };
        const answer = parsed.batch.length === 100 ? ANSWER : '{}';
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
        res.end(answer);
      });
    });
    server.keepAliveTimeout = 30_000;
    server.listen(0, '127.0.0.1', () => process.send!((server.address() as { port: number }).port));
  } else {
    const { default: Fastify } = await import('fastify');
    const app = Fastify({ logger: false, bodyLimit: 600_000, keepAliveTimeout: 30_000 });
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    app.post('/v1/batch', async (request, reply) => {
      const parsed = JSON.parse((request.body as Buffer).toString('utf8')) as { batch: unknown[] };
      return reply.header('content-type', 'application/json').send(parsed.batch.length === 100 ? ANSWER : '{}');
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    process.send!((app.server.address() as { port: number }).port);
  }
}

async function measure(kind: string, seconds: number, connections: number, bodies: Buffer[]) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve', kind], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve) => child.once('message', (m) => resolve(m as number)));
  let i = 0;
  const options = {
    origin: `http://127.0.0.1:${port}`,
    path: '/v1/batch',
    headers: { 'content-type': 'application/json' },
    body: () => bodies[i++ % bodies.length]!,
    callsPerRequest: 100,
    connections,
  };
  await runHttpLoad({ ...options, seconds: 1 });
  const cpu = startCpuWindow(child.pid);
  const load = await runHttpLoad({ ...options, seconds });
  const split = cpu();
  child.kill();
  const rps = load.requests / load.seconds;
  return {
    kind,
    rps,
    failures: load.failures,
    p50: percentile(load.latenciesMs, 50),
    p99: percentile(load.latenciesMs, 99),
    serverUsPerRequest: ((split.child ?? NaN) * 1e6) / rps,
    split,
  };
}

if (process.argv[2] === '--serve') await serve(process.argv[3]!);
else {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
  const bodies = Array.from({ length: 50 }, (_, n) => benchBatch(100, n * 100));
  process.stdout.write(`body ~${bodies[0]!.length} B, ${connections} connections, ${seconds}s per round\n`);
  for (let r = 0; r < rounds; r++) {
    for (const kind of r % 2 === 0 ? ['node', 'fastify'] : ['fastify', 'node']) {
      const m = await measure(kind, seconds, connections, bodies);
      process.stdout.write(
        `${m.kind.padEnd(8)} ${Math.round(m.rps).toLocaleString('en')} req/s, server ${m.serverUsPerRequest.toFixed(0)} µs CPU/request, p50 ${m.p50.toFixed(1)} ms, p99 ${m.p99.toFixed(1)} ms, ${m.failures} failed (${formatCpu(m.split, 'server')})\n`,
      );
    }
  }
}
