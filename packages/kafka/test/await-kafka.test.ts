// awaitKafka without a broker: nothing listens on the address, so every attempt fails the same way.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { ConfigStore } from '@sluice/config';
import { awaitKafka } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { createMetricsRegistry } from '@sluice/service-kit';
import { freePort, testConfig, waitUntil } from '@sluice/testkit';

test('while the brokers refuse: /readyz 503 (kafka false), /healthz 200, one error line per cause; abort stops it', async () => {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
  const [port, deadPort] = [await freePort(), await freePort()];
  const ctx = {
    name: 'ingest',
    env: {
      logLevel: 'debug',
      ports: { ingest: port, deliverer: 0, retry: 0, audienceSync: 0, deliveryLog: 0 },
      raw: {},
    },
    brokers: [`127.0.0.1:${deadPort}`],
    config: new ConfigStore(undefined, testConfig()),
    logger: createLogger({ name: 'ingest', level: 'info', destination: sink }),
    registry: createMetricsRegistry('ingest'),
  };
  const abort = new AbortController();
  const waiting = awaitKafka(ctx, { port, signal: abort.signal, initialDelayMs: 50, maxDelayMs: 100 });
  await waitUntil(
    async () => {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
      if (!res) return false;
      assert.equal(res.status, 503);
      assert.deepEqual(await res.json(), { ready: false, checks: { kafka: false } });
      return true;
    },
    10_000,
    '/readyz',
  );
  assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
  // Several more attempts fail in the same way; the cause is logged once.
  await new Promise((r) => setTimeout(r, 600));
  const errors = lines.filter((l) => l.includes('"level":50'));
  assert.equal(errors.length, 1, lines.join(''));
  assert.match(errors[0]!, /Kafka: broker unreachable \(check KAFKA_BROKERS\)/);
  assert.match(errors[0]!, /"cause":"broker unreachable"/);
  abort.abort(new Error('SIGTERM'));
  await assert.rejects(waiting, /SIGTERM/);
  // The stand-in server is gone: the port is free for the service again.
  await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`));
});
