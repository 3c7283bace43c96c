// runService's wait before the start: probes answer on the service's port until the service takes it over.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigStore, readEnv } from '@sluice/config';
import { createLogger } from '@sluice/logging';
import { createMetricsRegistry, runService, startHttpServer, waitForKafka } from '@sluice/service-kit';
import { freePort, testConfig, waitUntil } from '@sluice/testkit';

const logger = createLogger({ name: 'run-service-test', level: 'silent' });

async function readyz(port: number): Promise<{ status: number; body: unknown } | undefined> {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
  return res && { status: res.status, body: await res.json() };
}

test('while Kafka refuses: /readyz 503 (kafka false), /healthz 200; SIGTERM exits 0 without starting and frees the port', async () => {
  const [port, deadPort] = [await freePort(), await freePort()];
  const ctx = {
    name: 'ingest',
    env: readEnv({}),
    brokers: [`127.0.0.1:${deadPort}`],
    config: new ConfigStore(undefined, testConfig()),
    logger,
    registry: createMetricsRegistry('ingest'),
  };
  let started = false;
  let exitCode: number | undefined;
  const running = runService({
    name: 'ingest',
    logger,
    waitFor: waitForKafka(ctx, port),
    start: async () => {
      started = true;
      return { close: async () => {} };
    },
    exit: (code) => void (exitCode = code),
  });
  await waitUntil(async () => (await readyz(port)) !== undefined, 10_000, '/readyz answers');
  assert.deepEqual(await readyz(port), { status: 503, body: { ready: false, checks: { kafka: false } } });
  assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
  assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 200);
  process.emit('SIGTERM');
  await running;
  assert.equal(exitCode, 0);
  assert.equal(started, false);
  await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`));
});

test('after the condition holds the stand-in answers through the start (503, what it waits for) until the service takes the port over', async () => {
  const port = await freePort();
  let holds!: () => void;
  let proceed!: () => void;
  let startBegan = false;
  let exitCode: number | undefined;
  let close: (() => Promise<void>) | undefined;
  const running = runService({
    name: 'retry',
    logger,
    waitFor: {
      check: 'kafka',
      port,
      registry: createMetricsRegistry('retry'),
      until: async (_signal, waiting) => {
        await waiting();
        await new Promise<void>((resolve) => (holds = resolve));
      },
    },
    start: async (probe) => {
      startBegan = true;
      probe?.explain(() => 'list offsets of sluice.events answered NOT_LEADER_FOR_PARTITION');
      await new Promise<void>((resolve) => (proceed = resolve));
      await probe?.release(port);
      const http = await startHttpServer({ port, ops: { registry: createMetricsRegistry('retry'), readiness: {} } });
      close = () => http.close();
      return { close };
    },
    exit: (code) => void (exitCode = code),
  });
  await waitUntil(async () => (await readyz(port))?.status === 503, 10_000, 'stand-in /readyz 503');
  holds();
  await waitUntil(() => startBegan, 10_000, 'the start began');
  assert.deepEqual(await readyz(port), {
    status: 503,
    body: {
      ready: false,
      checks: { kafka: false },
      waitingFor: 'list offsets of sluice.events answered NOT_LEADER_FOR_PARTITION',
    },
  });
  assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
  proceed();
  await running;
  assert.equal(exitCode, undefined, 'started, not exited');
  // The stand-in dropped its keep-alive connections: the client's next request may meet one closed.
  await waitUntil(async () => (await readyz(port))?.status === 200, 10_000, 'the service answers /readyz');
  assert.deepEqual(await readyz(port), { status: 200, body: { ready: true, checks: {} } });
  await close!();
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
});
