import { PARENT_WATCH_PRELOAD } from '@sluice/service-kit';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { RETRY_HEADERS } from '@sluice/envelope';
import { SafeProducer } from '@sluice/kafka';
import { sleep, testBrokers, testConfig, waitUntil, createTestTopics, testKafka, watchTopics } from '@sluice/testkit';
import { retryMessage, retryState } from './helpers.ts';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sluice-retry-kill9-'));

/** Starts `main.ts` as its own process and resolves once its consumers are running. */
function startRetryProcess(configPath: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', PARENT_WATCH_PRELOAD, MAIN], {
    env: {
      ...process.env,
      SLUICE_CONFIG: configPath,
      KAFKA_BROKERS: testBrokers().join(','),
      RETRY_PORT: '0',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('retry service consuming')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`retry process exited early with ${code}`)));
  });
}

describe('kill -9 while tier partitions are paused', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('after a restart nothing is forwarded before its due time and nothing is lost', async () => {
    const retry = { window: '1m', schedule: ['1s', '2s', '4s'], tiers: ['1s', '2s', '4s'] };
    const config = testConfig({ retry });
    const configPath = join(dir, 'sluice.json');
    const { clientId, partitions, replicationFactor, topics } = config.kafka;
    writeFileSync(configPath, JSON.stringify({ kafka: { clientId, partitions, replicationFactor, topics }, retry }));
    const kafka = testKafka();
    await createTestTopics(kafka, config);
    const watched = await watchTopics(kafka, [topics.redeliver], 20);
    const redeliver = () => watched.records(topics.redeliver);
    const producer = new SafeProducer(kafka);
    await producer.connect();
    let child = await startRetryProcess(configPath);
    try {
      // Due 3–7 s ahead (Retry-After makes each due time exact): they sit in the 2 s and 4 s tiers,
      // partitions paused, and in the final tier's memory, when the process is killed.
      const states = Array.from({ length: 60 }, (_, i) =>
        retryState({ retryAfterMs: 3_000 + (i % 20) * 200, sourceId: `src-${i % 7}` }),
      );
      await producer.send(
        topics.retry,
        states.map((s) => retryMessage(s)),
      );
      await sleep(2_000);
      const forwardedBeforeKill = new Set(redeliver().map((r) => r.headers[RETRY_HEADERS.messageId])).size;
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      assert.ok(forwardedBeforeKill < states.length, 'records were still waiting when the process died');
      await sleep(1_500);
      child = await startRetryProcess(configPath);

      const ids = new Set(states.map((s) => s.messageId));
      await waitUntil(
        () =>
          new Set(
            redeliver()
              .map((r) => r.headers[RETRY_HEADERS.messageId])
              .filter((id) => ids.has(id!)),
          ).size === ids.size,
        50_000,
        'every retry forwarded (the group first waits out the dead member session, 30 s)',
      );
      await sleep(1_000);
      for (const r of redeliver()) {
        const dueAt = Number(r.headers[RETRY_HEADERS.dueAt]);
        assert.ok(r.at >= dueAt, `${r.headers[RETRY_HEADERS.messageId]} read ${dueAt - r.at} ms before due`);
      }
      for (const state of states) {
        const copies = redeliver().filter((r) => r.headers[RETRY_HEADERS.messageId] === state.messageId);
        assert.ok(copies.length >= 1, `${state.messageId} lost`);
      }
    } finally {
      child.kill('SIGKILL');
      await Promise.all([watched.stop(), producer.disconnect()]);
    }
  });
});
