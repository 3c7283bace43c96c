import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { serviceNodeArgs } from '@sluice/service-kit';
import {
  createTestTopics,
  fileKafka,
  prefixedTopics,
  uniqueName,
  scrapeMetrics,
  startOtlpGrpcReceiver,
  startOtlpReceiver,
  startTestCatalog,
  testConfig,
  testKafka,
  testKeyring,
  waitUntil,
} from '@sluice/testkit';
import { ServiceProcess, writeConfigFile, type ServiceName } from '../support/service-process.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sluice-lifecycle-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const prefix = uniqueName('life');
const goodConfig = writeConfigFile(join(dir, 'good.yaml'), {
  sources: [{ id: 'src', writeKeys: ['wk'] }],
  destinations: [
    { id: 'dst', type: 'webhooks', sourceIds: ['src'], settings: { webhookUrl: 'http://127.0.0.1:9/hook' } },
  ],
  kafka: {
    clientId: prefix,
    partitions: 1,
    replicationFactor: 1,
    topics: prefixedTopics(prefix),
  },
  retry: { tiers: ['1s', '2s'] },
});
const badConfig = writeConfigFile(join(dir, 'bad.yaml'), {
  sources: [{ id: 'src', writeKeys: ['wk'] }],
  destinations: [
    {
      id: 'dst',
      type: 'webhooks',
      sourceIds: ['src'],
      settings: { webhooks: [{ url: 'https://x.example/', headers: { 'User-Agent': 'evil' } }] },
    },
  ],
});

const services: ServiceName[] = ['ingest', 'deliverer', 'retry', 'audience-sync'];

describe('every service: ops routes, readiness, SIGTERM', () => {
  for (const name of services) {
    it(`${name} serves /healthz, /readyz, /metrics and exits 0 on SIGTERM`, async () => {
      const svc = await new ServiceProcess(name, {
        SLUICE_CONFIG: goodConfig,
        KAFKA_BROKERS: process.env.KAFKA_BROKERS!,
      }).start();
      try {
        assert.equal((await fetch(`${svc.url}/healthz`)).status, 200);
        const ready = await fetch(`${svc.url}/readyz`);
        assert.equal(ready.status, 200);
        assert.equal(((await ready.json()) as { ready: boolean }).ready, true);
        const metrics = await scrapeMetrics(svc.url);
        assert.match(metrics, /^process_cpu_seconds_total\{sluice_service="[a-z-]+"\}/m);
      } finally {
        const { code, ms } = await svc.sigterm();
        assert.equal(code, 0, svc.output);
        assert.ok(ms < 25_000, `stopped in ${ms} ms`);
      }
    });
  }
});

describe('every OTLP protocol: a service starts and exports its spans', () => {
  for (const [protocol, start] of [
    ['http/protobuf', startOtlpReceiver],
    ['grpc', startOtlpGrpcReceiver],
  ] as const) {
    it(`ingest with OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}`, async () => {
      const otlp = await start();
      const svc = new ServiceProcess('ingest', {
        SLUICE_CONFIG: goodConfig,
        KAFKA_BROKERS: process.env.KAFKA_BROKERS!,
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_BSP_SCHEDULE_DELAY: '50',
      });
      try {
        await svc.start();
        const res = await fetch(`${svc.url}/v1/track`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Basic ${Buffer.from('wk:').toString('base64')}`,
          },
          body: JSON.stringify({ userId: 'u1', event: 'Exported' }),
        });
        assert.equal(res.status, 200);
        await waitUntil(() => otlp.spans.some((s) => s.name === 'POST /v1/track'), 15_000, 'the request span');
        assert.equal(otlp.spans.find((s) => s.name === 'POST /v1/track')!.service, 'sluice-ingest');
      } finally {
        assert.equal((await svc.sigterm()).code, 0, svc.output);
        await otlp.close();
      }
    });
  }
});

describe('a bad config field stops a service with a message naming it', () => {
  for (const name of services) {
    it(`${name} exits 1 naming destinations[0].settings.webhooks[0].headers.User-Agent`, async () => {
      const child = spawn(process.execPath, serviceNodeArgs(name), {
        cwd: root,
        env: { ...process.env, SLUICE_CONFIG: badConfig },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (c) => (stderr += c));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      assert.equal(code, 1);
      assert.match(stderr, /destinations\[0\]\.settings\.webhooks\[0\]\.headers\.User-Agent: header name is reserved/);
    });
  }

  it('a missing SLUICE_CONFIG is named too', async () => {
    const env = { ...process.env };
    delete env.SLUICE_CONFIG;
    const child = spawn(process.execPath, serviceNodeArgs('deliverer'), {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    assert.equal(await new Promise((resolve) => child.on('exit', resolve)), 1);
    assert.match(stderr, /SLUICE_CONFIG: is required/);
  });

  it('a tracing variable it cannot honour is named too', async () => {
    const child = spawn(process.execPath, serviceNodeArgs('retry'), {
      cwd: root,
      env: {
        ...process.env,
        SLUICE_CONFIG: goodConfig,
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/xml',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    assert.equal(await new Promise((resolve) => child.on('exit', resolve)), 1);
    assert.match(
      stderr,
      /retry: invalid configuration: OTEL_EXPORTER_OTLP_PROTOCOL=http\/xml: expected one of http\/json, http\/protobuf, grpc/,
    );
  });
});

describe('keys other than those that wrote the catalog stop a start', () => {
  it('the deliverer exits 1 naming runtimeDestinations.keyring and the record it cannot decrypt', async () => {
    const raw = {
      sources: [{ id: 'src', writeKeys: ['wk'] }],
      runtimeDestinations: testKeyring('SLUICE_LIFECYCLE_WRITER_KEY'),
    };
    const config = testConfig(raw);
    const kafka = testKafka();
    await createTestTopics(kafka, config);
    const catalog = await startTestCatalog(kafka, config);
    let recordKey: string;
    try {
      const made = await catalog.writer.create({
        by: 'test',
        at: Date.now(),
        definition: {
          id: 'ledger',
          type: 'webhooks',
          sourceIds: ['src'],
          settings: { webhooks: [{ url: 'http://127.0.0.1:9/hook' }] },
        },
      });
      assert.ok(made.kind === 'created', JSON.stringify(made));
      recordKey = made.record.key;
    } finally {
      await catalog.close();
    }
    const file = writeConfigFile(join(dir, 'other-keys.yaml'), {
      ...raw,
      kafka: fileKafka(config),
      runtimeDestinations: { keyring: [{ id: 'k1', key: { env: 'SLUICE_LIFECYCLE_OTHER_KEY' } }] },
    });
    const child = spawn(process.execPath, serviceNodeArgs('deliverer'), {
      cwd: root,
      env: {
        ...process.env,
        SLUICE_CONFIG: file,
        SLUICE_LIFECYCLE_OTHER_KEY: randomBytes(32).toString('hex'),
        // Its start is logged at info: a deliverer that starts anyway is seen to, and stopped.
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const ended = new Promise<number | null | 'started'>((resolve) => {
      child.on('exit', resolve);
      const take = (c: Buffer) => {
        output += c;
        if (output.includes('"msg":"deliverer started"')) resolve('started');
      };
      child.stdout.on('data', take);
      child.stderr.on('data', take);
    });
    const code = await ended;
    if (code === 'started') child.kill('SIGKILL');
    assert.equal(code, 1, output);
    assert.match(output, /runtimeDestinations\.keyring: 1 record\(s\) in force in the catalog cannot be decrypted/);
    assert.ok(output.includes(recordKey), output);
  });
});
