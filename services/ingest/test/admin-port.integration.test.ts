// INGEST_ADMIN_PORT: /metrics moves off the public port; the probes answer on both.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readEnv } from '@sluice/config';
import { testServiceContext } from '@sluice/testkit';
import { createIngest } from '../src/index.ts';
import { ingestConfig } from './helpers.ts';

test('INGEST_ADMIN_PORT is read as a port, absent by default, and a bad value names the variable', () => {
  assert.equal(readEnv({}).ports.ingestAdmin, undefined);
  assert.equal(readEnv({ INGEST_ADMIN_PORT: '9464' }).ports.ingestAdmin, 9464);
  assert.throws(() => readEnv({ INGEST_ADMIN_PORT: 'metrics' }), /INGEST_ADMIN_PORT/);
});

test('with an admin port, /metrics is served there only; /healthz and /readyz answer on both ports', async () => {
  const ctx = testServiceContext('ingest', ingestConfig());
  const service = await createIngest(ctx, { port: 0, adminPort: 0, host: '127.0.0.1' }).start();
  try {
    assert.ok(service.adminPort && service.adminPort !== service.port);
    const publicUrl = `http://127.0.0.1:${service.port}`;
    const adminUrl = `http://127.0.0.1:${service.adminPort}`;
    const metrics = await fetch(`${adminUrl}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /^process_cpu_seconds_total\{sluice_service="ingest"\}/m);
    assert.equal((await fetch(`${publicUrl}/metrics`)).status, 404);
    for (const url of [publicUrl, adminUrl]) {
      assert.equal((await fetch(`${url}/healthz`)).status, 200, `${url}/healthz`);
      assert.equal((await fetch(`${url}/readyz`)).status, 200, `${url}/readyz`);
    }
  } finally {
    await service.close();
  }
});

test('without an admin port, the public port serves /metrics as well', async () => {
  const ctx = testServiceContext('ingest', ingestConfig());
  const service = await createIngest(ctx, { port: 0, host: '127.0.0.1' }).start();
  try {
    assert.equal(service.adminPort, undefined);
    assert.equal((await fetch(`http://127.0.0.1:${service.port}/metrics`)).status, 200);
  } finally {
    await service.close();
  }
});
