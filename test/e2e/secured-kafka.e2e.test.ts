// The pipeline on a secured broker, as managed clusters run it: a SASL_SSL listener with
// SCRAM-SHA-512, a certificate from a private CA, and client certificates required (mutual TLS).
// The broker is started here (`@sluice/local-kafka`, `secured`); KAFKA_BROKERS is not used.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KafkaSecurity } from '@sluice/config';
import { checkKafkaConnection, createKafka, describeKafkaFailure } from '@sluice/kafka';
import { generateTlsMaterial, startLocalKafka, type LocalKafka } from '@sluice/local-kafka';
import { createLogger } from '@sluice/logging';
import { waitUntil } from '@sluice/testkit';
import { formatSummary } from '../support/ledger.ts';
import { Pipeline } from '../support/pipeline.ts';
import { ServiceProcess, writeConfigFile } from '../support/service-process.ts';
import { freePorts } from '@sluice/local-runtime';

let broker: LocalKafka;
const dir = mkdtempSync(join(tmpdir(), 'sluice-secured-'));

before(async () => {
  broker = await startLocalKafka({ secured: { requireClientCertificate: true } });
});
after(async () => {
  await broker?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** The `kafka` section of the config file for this broker; the password comes from KAFKA_PASSWORD. */
function kafkaSection(caFile = broker.security!.caFile) {
  const s = broker.security!;
  return {
    ssl: { caFile, certFile: s.clientCertFile, keyFile: s.clientKeyFile },
    sasl: { mechanism: 'scram-sha-512', username: s.username, password: { env: 'KAFKA_PASSWORD' } },
  };
}

/** The status of `/readyz` (the body read, so no connection is left busy), or undefined when nothing answers. */
async function readyz(base: string): Promise<number | undefined> {
  try {
    const res = await fetch(`${base}/readyz`);
    await res.arrayBuffer();
    return res.status;
  } catch {
    return undefined;
  }
}

/** An unsigned JWT, which the local broker's OAUTHBEARER validator accepts (never a production setting). */
function unsignedJwt(sub: string, lifetimeS = 3_600): string {
  const now = Math.floor(Date.now() / 1000);
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'none' })}.${part({ sub, iat: now, exp: now + lifetimeS })}.`;
}

/** Connects once with these settings; resolves to the failure's cause, or 'connected'. */
async function connectWith(security: KafkaSecurity): Promise<string> {
  const kafka = createKafka({
    brokers: [broker.brokers],
    clientId: 'secured-check',
    logger: createLogger({ name: 'check', level: 'silent' }),
    security,
    retries: 0,
  });
  return checkKafkaConnection(kafka).then(
    () => 'connected',
    (err: unknown) => describeKafkaFailure(err).cause,
  );
}

describe('secured Kafka (SASL_SSL, SCRAM-SHA-512, mutual TLS)', () => {
  it('mutual TLS: without a client certificate the broker refuses the connection', async () => {
    const s = broker.security!;
    const sasl = { mechanism: 'scram-sha-512', username: s.username, password: s.password } as const;
    const ssl = { caFile: s.caFile };
    assert.equal(
      await connectWith({ ssl: { ...ssl, certFile: s.clientCertFile, keyFile: s.clientKeyFile }, sasl }),
      'connected',
    );
    assert.notEqual(await connectWith({ ssl, sasl }), 'connected');
  });

  it('plain, scram-sha-256 and scram-sha-512 authenticate; a wrong password is named as such for each', async () => {
    const s = broker.security!;
    const ssl = { caFile: s.caFile, certFile: s.clientCertFile, keyFile: s.clientKeyFile };
    for (const mechanism of ['plain', 'scram-sha-256', 'scram-sha-512'] as const) {
      const ok = await connectWith({ ssl, sasl: { mechanism, username: s.username, password: s.password } });
      assert.equal(ok, 'connected', mechanism);
      const wrong = await connectWith({ ssl, sasl: { mechanism, username: s.username, password: 'wrong' } });
      assert.equal(wrong, 'authentication failed', mechanism);
    }
  });

  it('oauthbearer: the token file is read again at each authentication', async () => {
    const s = broker.security!;
    const ssl = { caFile: s.caFile, certFile: s.clientCertFile, keyFile: s.clientKeyFile };
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, unsignedJwt('sluice-ingest'));
    const security: KafkaSecurity = { ssl, sasl: { mechanism: 'oauthbearer', tokenFile } };
    assert.equal(await connectWith(security), 'connected');
    writeFileSync(tokenFile, 'not-a-jwt');
    assert.equal(await connectWith(security), 'authentication failed');
    writeFileSync(tokenFile, unsignedJwt('sluice-ingest'));
    assert.equal(await connectWith(security), 'connected');
  });

  it('oauthbearer: OIDC client credentials are exchanged for a token the broker accepts', async () => {
    const s = broker.security!;
    const seen: string[] = [];
    const idp = createServer((req, res) => {
      seen.push(req.headers.authorization ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ access_token: unsignedJwt('sluice-deliverer'), token_type: 'Bearer', expires_in: 3_600 }),
      );
    });
    await new Promise<void>((r) => idp.listen(0, '127.0.0.1', r));
    try {
      const tokenEndpoint = `http://127.0.0.1:${(idp.address() as AddressInfo).port}/token`;
      const security: KafkaSecurity = {
        ssl: { caFile: s.caFile, certFile: s.clientCertFile, keyFile: s.clientKeyFile },
        sasl: { mechanism: 'oauthbearer', oidc: { tokenEndpoint, clientId: 'sluice', clientSecret: 'client-secret' } },
      };
      assert.equal(await connectWith(security), 'connected');
      assert.deepEqual(seen, [`Basic ${Buffer.from('sluice:client-secret').toString('base64')}`]);
    } finally {
      await new Promise<void>((r) => idp.close(() => r()));
    }
  });

  it('ingest, deliverer and retry deliver every event, retries included, over the secured listener', async (t) => {
    const s = broker.security!;
    let failUntil = Number.POSITIVE_INFINITY;
    const pipeline = await Pipeline.start({
      endpoints: [() => (Date.now() < failUntil ? { status: 503 } : { status: 200 })],
      config: {
        kafka: kafkaSection(),
        retry: { window: '60s', schedule: ['1s', '2s'], tiers: ['1s', '2s'] },
        delivery: { timeout: '2s' },
      },
      brokers: broker.brokers,
      env: { KAFKA_PASSWORD: s.password },
      security: {
        ssl: { caFile: s.caFile, certFile: s.clientCertFile, keyFile: s.clientKeyFile },
        sasl: { mechanism: 'scram-sha-512', username: s.username, password: s.password },
      },
    });
    try {
      failUntil = Date.now() + 2_000;
      const { acked } = await pipeline.send(300, { batchSize: 50 });
      assert.equal(acked, 300);
      await pipeline.settle(45_000);
      await pipeline.collectDeadLetters(0, 2_000);
      const summary = pipeline.ledger.summary();
      t.diagnostic(formatSummary('secured-kafka', summary));
      assert.equal(summary.lost, 0);
      assert.equal(summary.delivered, 300);
      assert.equal(summary.deadLettered, 0);
      assert.equal(summary.badSignatures, 0);
      assert.ok(
        pipeline.ledger.arrivals.some((a) => a.status === 503),
        'some first attempts failed, so the retry path ran',
      );
    } finally {
      await pipeline.close();
    }
  });

  it('a wrong password: /readyz 503, one log line says authentication failed, the process keeps retrying', async () => {
    const config = writeConfigFile(join(dir, 'wrong-password.yaml'), { kafka: kafkaSection() });
    const svc = new ServiceProcess('deliverer', {
      SLUICE_CONFIG: config,
      KAFKA_BROKERS: broker.brokers,
      KAFKA_PASSWORD: 'not-the-password',
    });
    const child = await svc.spawn();
    try {
      const body = await waitUntil(
        async () => {
          const res = await fetch(`${svc.url}/readyz`).catch(() => undefined);
          return res?.status === 503
            ? ((await res.json()) as { ready: boolean; checks: Record<string, boolean> })
            : undefined;
        },
        30_000,
        'deliverer /readyz 503',
      );
      assert.deepEqual(body, { ready: false, checks: { kafka: false } });
      // Several attempts (1 s, 2 s, 4 s apart) pass; still one line, still running, still not ready.
      await new Promise((r) => setTimeout(r, 4_000));
      const lines = svc.output.split('\n').filter((l) => l.includes('authentication failed'));
      assert.equal(lines.length, 1, svc.output);
      assert.match(lines[0]!, /"level":50/);
      assert.match(lines[0]!, /check kafka\.sasl/);
      assert.doesNotMatch(svc.output, /not-the-password/, 'the password never reaches the log');
      assert.equal(child.exitCode, null, 'no crash loop: the process stays up');
      assert.equal((await fetch(`${svc.url}/readyz`)).status, 503);
      assert.equal((await fetch(`${svc.url}/healthz`)).status, 200);
    } finally {
      const { code } = await svc.sigterm();
      assert.equal(code, 0, 'SIGTERM while waiting for Kafka is a clean stop');
    }
  });

  it('an untrusted broker certificate: /readyz 503, one line saying so; with the right CA file it starts', async () => {
    const other = mkdtempSync(join(dir, 'other-ca-'));
    const untrusted = (await generateTlsMaterial(other)).caFile;
    const caFile = join(dir, 'ca-in-use.pem');
    copyFileSync(untrusted, caFile);
    const config = writeConfigFile(join(dir, 'untrusted.yaml'), { kafka: kafkaSection(caFile) });
    const svc = new ServiceProcess('ingest', {
      SLUICE_CONFIG: config,
      KAFKA_BROKERS: broker.brokers,
      KAFKA_PASSWORD: broker.security!.password,
    });
    const child = await svc.spawn();
    try {
      await waitUntil(async () => (await readyz(svc.url)) === 503, 30_000, 'ingest /readyz 503');
      await waitUntil(() => svc.output.includes('certificate is not trusted'), 10_000, 'the log line');
      const lines = svc.output.split('\n').filter((l) => l.includes('certificate is not trusted'));
      assert.equal(lines.length, 1, svc.output);
      assert.match(lines[0]!, /check kafka\.ssl\.caFile/);
      assert.equal(child.exitCode, null);
      // The operator fixes the CA file; the next attempt reads it again and the service starts.
      copyFileSync(broker.security!.caFile, caFile);
      await waitUntil(async () => (await readyz(svc.url)) === 200, 60_000, 'ingest ready').catch((err: Error) => {
        throw new Error(`${err.message}; ingest output:\n${svc.output.slice(-4_000)}`);
      });
      assert.equal(child.exitCode, null);
    } finally {
      await svc.sigterm();
    }
  });

  it('npm start with KAFKA_BROKERS on the secured listener and the documented settings delivers a curl event', {
    timeout: 120_000,
  }, async () => {
    const [ingest, deliverer, retry, audienceSync, receiverPort] = await freePorts(5);
    const config = writeConfigFile(join(dir, 'npm-start.yaml'), {
      sources: [{ id: 'demo', writeKeys: ['secured-wk'] }],
      destinations: [
        {
          id: 'demo-webhooks',
          type: 'webhooks',
          sourceIds: ['demo'],
          settings: {
            webhooks: [{ url: `http://127.0.0.1:${receiverPort}/webhook` }],
            sharedSecret: 'secured-secret',
          },
        },
      ],
      kafka: { ...kafkaSection(), clientId: 'npm-start-secured', partitions: 2, replicationFactor: 1 },
      delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
    });
    const runner = spawn(process.execPath, ['packages/runner/src/main.ts'], {
      env: {
        ...process.env,
        KAFKA_BROKERS: broker.brokers,
        KAFKA_PASSWORD: broker.security!.password,
        SLUICE_CONFIG: config,
        INGEST_PORT: String(ingest),
        DELIVERER_PORT: String(deliverer),
        RETRY_PORT: String(retry),
        AUDIENCE_SYNC_PORT: String(audienceSync),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    runner.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    runner.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => runner.on('exit', (code) => resolve(code)));
    try {
      await waitUntil(
        () => output.includes('Send an event'),
        90_000,
        `npm start ready (output so far: ${output.slice(-2_000)})`,
      );
      // What the printed curl line does.
      const res = await fetch(`http://127.0.0.1:${ingest}/v1/track`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Basic ${Buffer.from('secured-wk:').toString('base64')}`,
        },
        body: JSON.stringify({ userId: 'user-1', event: 'Secured Demo Event', properties: { plan: 'pro' } }),
      });
      assert.equal(res.status, 200);
      await waitUntil(
        () => /webhook track .*signature ok .*Secured Demo Event/.test(output),
        20_000,
        'the demo receiver line',
      );
    } finally {
      runner.kill('SIGINT');
      assert.equal(await exited, 0);
    }
  });
});
