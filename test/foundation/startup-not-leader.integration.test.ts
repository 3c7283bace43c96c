// A broker that answers "not the leader" to ListOffsets for 30 s right after a service created
// its topics (a busy broker placing new partitions) must not end the service:
// /readyz says 503 and what it waits for meanwhile, and 200 once Kafka answers. Only the
// start-up deadline (kafka.startupTimeout) ends a start that Kafka keeps answering "not yet".
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { PARENT_WATCH_PRELOAD, type ServiceName, serviceNodeArgs } from '@sluice/service-kit';
import {
  freePort,
  prefixedTopics,
  startKafkaFaultProxy,
  testBrokers,
  uniqueName,
  waitUntil,
  type KafkaFaultProxy,
} from '@sluice/testkit';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** How long the broker answers "not the leader": longer than kafkajs's own retries of one call (~20 s). */
const NOT_LEADER_MS = 30_000;

const dir = mkdtempSync(join(tmpdir(), 'sluice-startup-'));
const proxies: KafkaFaultProxy[] = [];
const children: ChildProcess[] = [];
after(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await Promise.all(proxies.map((p) => p.close()));
  rmSync(dir, { recursive: true, force: true });
});

const PORT_VARS: Record<'audience-sync' | 'deliverer', string> = {
  'audience-sync': 'AUDIENCE_SYNC_PORT',
  deliverer: 'DELIVERER_PORT',
};

interface Started {
  child: ChildProcess;
  port: number;
  exit: Promise<number | null>;
  log: () => string;
}

/** Starts `name` as its own process, through the proxy, with topics of its own (created at its start). */
async function startService(
  name: ServiceName & keyof typeof PORT_VARS,
  brokers: string,
  kafka: Record<string, unknown> = {},
): Promise<Started> {
  const prefix = uniqueName(`startup-${name}`);
  const configPath = join(dir, `${prefix}.json`);
  writeFileSync(
    configPath,
    JSON.stringify({
      kafka: { clientId: prefix, partitions: 2, replicationFactor: 1, topics: prefixedTopics(prefix), ...kafka },
    }),
  );
  const port = await freePort();
  let output = '';
  const child = spawn(process.execPath, serviceNodeArgs(name, [PARENT_WATCH_PRELOAD]), {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      KAFKA_BROKERS: brokers,
      SLUICE_CONFIG: configPath,
      LOG_LEVEL: 'warn',
      [PORT_VARS[name]]: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, port, exit, log: () => output };
}

async function readyz(port: number): Promise<{ status: number; body: { waitingFor?: string } } | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(5_000) });
    return { status: res.status, body: (await res.json()) as { waitingFor?: string } };
  } catch {
    return undefined;
  }
}

const running = (s: Started) => s.child.exitCode === null && s.child.signalCode === null;

test('30 s of "not the leader" from ListOffsets right after the topics were created: audience-sync and the deliverer wait (readyz 503 naming it), then become ready without exiting', {
  timeout: 240_000,
}, async () => {
  const proxy = await startKafkaFaultProxy(testBrokers()[0]!);
  proxies.push(proxy);
  proxy.listOffsetsNotLeader = true;
  const services = [await startService('audience-sync', proxy.brokers), await startService('deliverer', proxy.brokers)];
  const faultEnds = Date.now() + NOT_LEADER_MS;

  const waiting = new Map<number, string>();
  while (Date.now() < faultEnds) {
    for (const s of services) {
      assert.ok(running(s), `exited during the fault:\n${s.log()}`);
      const r = await readyz(s.port);
      if (r) assert.equal(r.status, 503, 'not ready while Kafka answers "not the leader"');
      if (r?.body.waitingFor?.includes('NOT_LEADER_FOR_PARTITION')) waiting.set(s.port, r.body.waitingFor);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  assert.ok(proxy.rewritten.listOffsets + proxy.rewritten.metadata > 0, 'the broker did answer "not the leader"');
  proxy.listOffsetsNotLeader = false;
  for (const s of services) {
    await waitUntil(
      async () => (await readyz(s.port))?.status === 200 || !running(s),
      120_000,
      'ready after the fault',
    );
    assert.ok(running(s), `exited after the fault:\n${s.log()}`);
    assert.equal((await readyz(s.port))?.status, 200);
  }
  for (const s of services) {
    assert.match(waiting.get(s.port) ?? '', /answered NOT_LEADER_FOR_PARTITION/, `readyz named the wait:\n${s.log()}`);
    assert.match(s.log(), /waiting for Kafka: .* answered NOT_LEADER_FOR_PARTITION; retrying until /);
  }
  for (const s of services) s.child.kill('SIGTERM');
  for (const s of services) assert.equal(await s.exit, 0, 'a clean stop');
});

test('Kafka answering "not the leader" (ListOffsets and Metadata) past kafka.startupTimeout ends the start: exit 1 naming the deadline and the call', {
  timeout: 120_000,
}, async () => {
  const proxy = await startKafkaFaultProxy(testBrokers()[0]!);
  proxies.push(proxy);
  proxy.listOffsetsNotLeader = true;
  proxy.metadataNotLeader = true;
  const s = await startService('audience-sync', proxy.brokers, { startupTimeout: '3s' });
  await waitUntil(async () => (await readyz(s.port))?.status === 503 || !running(s), 60_000, 'the probe port answers');
  await waitUntil(() => !running(s), 90_000, `the start ends:\n${s.log()}`);
  assert.equal(await s.exit, 1, s.log());
  assert.match(
    s.log(),
    /Kafka start-up deadline \(3 s, kafka\.startupTimeout\) passed: .* still answered NOT_LEADER_FOR_PARTITION/,
  );
});
