// A service whose parent is gone (the runner or a test killed with SIGKILL) must not linger: the
// parent watch preloaded into every spawned service stops it within a few seconds.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, it } from 'node:test';
import { startLocalKafka } from '@sluice/local-kafka';
import { processExists } from '@sluice/local-runtime';
import { waitUntil } from '@sluice/testkit';
import { writeUniqueConfig } from '../ops/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-parent-death-'));
const pids: number[] = [];
after(() => {
  for (const pid of pids) if (processExists(pid)) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

async function killParentAndWatch(brokers: string, beforeKill: () => Promise<void> = async () => {}): Promise<void> {
  const { path: config } = writeUniqueConfig(dir, { retry: { tiers: ['1s', '2s'] } });
  const fixture = fileURLToPath(new URL('./fixtures/service-parent.ts', import.meta.url));
  const parent = spawn(process.execPath, [...process.execArgv, fixture, config], {
    env: { ...process.env, KAFKA_BROKERS: brokers },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: parent.stdout! }).once('line', resolve);
    parent.once('exit', (code) => reject(new Error(`the parent exited ${code} before its services were ready`)));
  });
  const services = JSON.parse(line) as { name: string; pid: number }[];
  pids.push(...services.map((s) => s.pid));
  assert.equal(services.length, 4);
  assert.ok(
    services.every((s) => processExists(s.pid)),
    'all running before the kill',
  );
  await beforeKill();

  const killedAt = Date.now();
  parent.kill('SIGKILL');
  await waitUntil(() => services.every((s) => !processExists(s.pid)), 10_000, 'services gone after their parent');
  const tookMs = Date.now() - killedAt;
  assert.ok(tookMs < 8_000, `gone within 8 s (took ${tookMs} ms)`);
}

it('SIGKILL of the parent: every service it started is gone within a few seconds', () =>
  killParentAndWatch(process.env.KAFKA_BROKERS!));

it('SIGKILL of the parent while Kafka is down too: the services still go within a few seconds', async () => {
  const broker = await startLocalKafka({ log: () => undefined });
  try {
    await killParentAndWatch(broker.brokers, () => broker.stop());
  } finally {
    await broker.dispose();
  }
});
