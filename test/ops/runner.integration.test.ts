// `npm start` end to end: the runner (as `npm start` runs it) against the test broker, the printed
// curl line, the demo receiver's verified-webhook line within 2 s, Ctrl-C leaving nothing behind, and
// a config whose endpoint is the user's own receiver, already listening on 127.0.0.1.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { prefixedTopics, startReceiver, testBrokers, uniqueName, waitUntil } from '@sluice/testkit';
import { freePorts } from '@sluice/local-runtime';
import { descendants, isAlive } from './process-tree.ts';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'sluice-runner-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A demo-shaped config on fresh topics, its webhooks going to `webhookUrl`. */
function writeConfig(webhookUrl: string): { path: string; writeKey: string } {
  const prefix = uniqueName('runner');
  const writeKey = `wk-${prefix}`;
  const topics = prefixedTopics(prefix);
  const config = {
    sources: [{ id: 'demo', name: 'Demo source', writeKeys: [writeKey] }],
    destinations: [
      {
        id: 'demo-webhooks',
        type: 'webhooks',
        sourceIds: ['demo'],
        settings: { webhooks: [{ url: webhookUrl }], sharedSecret: 'runner-test-secret' },
      },
    ],
    kafka: {
      clientId: prefix,
      partitions: 2,
      replicationFactor: 1,
      topics,
    },
    delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
  };
  const path = join(dir, `${prefix}.json`);
  writeFileSync(path, JSON.stringify(config, null, 2));
  return { path, writeKey };
}

interface RunningRunner {
  pid: number;
  lines: string[];
  /** Everything printed so far (stdout lines, then stderr), for failure messages. */
  output(): string;
  /** Waits for the banner and returns the curl line it prints. */
  banner(): Promise<string>;
  /** SIGINT, as Ctrl-C: resolves with the exit, or undefined if it has not exited within 45 s. */
  interrupt(): Promise<{ code: number | null; signal: string | null } | undefined>;
  /** SIGKILL the runner and its children if it still runs (test clean-up). */
  kill(): void;
}

/** The runner as `npm start` runs it, on the test broker, with the services on free ports. */
async function startRunner(configPath: string): Promise<RunningRunner & { ports: Record<string, number> }> {
  const [ingest, deliverer, retry, audienceSync, deliveryLog] = await freePorts(5);
  const runner = spawn(process.execPath, ['packages/runner/src/main.ts'], {
    env: {
      ...process.env,
      KAFKA_BROKERS: testBrokers().join(','),
      SLUICE_CONFIG: configPath,
      INGEST_PORT: String(ingest),
      DELIVERER_PORT: String(deliverer),
      RETRY_PORT: String(retry),
      AUDIENCE_SYNC_PORT: String(audienceSync),
      DELIVERY_LOG_PORT: String(deliveryLog),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let buffered = '';
  runner.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const parts = buffered.split('\n');
    buffered = parts.pop()!;
    lines.push(...parts);
    if (process.env.RUNNER_TEST_DEBUG) for (const p of parts) console.error(Date.now(), p.slice(0, 160));
  });
  let stderr = '';
  runner.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    runner.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const output = () => `${lines.join('\n')}\n${stderr}`;
  return {
    pid: runner.pid!,
    ports: {
      ingest: ingest!,
      deliverer: deliverer!,
      retry: retry!,
      audienceSync: audienceSync!,
      deliveryLog: deliveryLog!,
    },
    lines,
    output,
    async banner() {
      await waitUntil(
        () => lines.some((l) => l.includes('Sluice is running')),
        110_000,
        `the banner; output so far:\n${output()}`,
      );
      const curl = lines.find((l) => l.trim().startsWith('curl '))?.trim();
      assert.ok(curl, 'the banner prints a curl line');
      return curl;
    },
    async interrupt() {
      runner.kill('SIGINT');
      let timer: NodeJS.Timeout | undefined;
      const exit = await Promise.race([
        exited,
        new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), 45_000))),
      ]);
      clearTimeout(timer);
      return exit;
    },
    kill() {
      if (runner.exitCode !== null) return;
      for (const pid of descendants(runner.pid!)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      runner.kill('SIGKILL');
    },
  };
}

test('npm start: printed curl → verified webhook at the demo receiver within 2 s; Ctrl-C leaves no process', {
  timeout: 150_000,
}, async () => {
  const [receiverPort] = await freePorts(1);
  const { path, writeKey } = writeConfig(`http://127.0.0.1:${receiverPort}/webhook`);
  const runner = await startRunner(path);
  const { lines, output } = runner;
  const { ingest, deliverer } = runner.ports;

  try {
    const curl = await runner.banner();
    assert.ok(
      lines.some((l) => l.includes(`Write key (source "demo"): ${writeKey}`)),
      'the banner names the write key',
    );
    assert.ok(
      lines.some((l) => l.includes(`new Analytics("${writeKey}", { endpoint: "http://localhost:${ingest}" })`)),
      'TS snippet',
    );
    assert.ok(
      lines.some((l) => l.includes(`http://localhost:${deliverer}/metrics`)),
      'metrics URLs',
    );
    assert.ok(
      lines.some((l) => /^ +demo receiver +http:\/\/127\.0\.0\.1:\d+\/webhook/.test(l)),
      'the banner names the demo receiver',
    );
    assert.ok(curl.includes(`http://localhost:${ingest}/v1/track`) && curl.includes(`${writeKey}:`));

    const pidsBefore = descendants(runner.pid);
    assert.ok(pidsBefore.length >= 4, `the four services run as children (found ${pidsBefore.length})`);

    const sentAt = Date.now();
    const { stdout: response } = await run('bash', ['-c', curl]);
    assert.match(response, /"success":\s*true/, `ingest accepted the curl call: ${response}`);
    const webhook = await waitUntil(
      () => lines.find((l) => /^webhook track messageId=\S+ signature ok /.test(l) && l.includes('"Demo Event"')),
      2_000,
      `a verified webhook line; output:\n${output()}`,
    );
    assert.ok(Date.now() - sentAt <= 2_500, `webhook after ${Date.now() - sentAt} ms`);
    assert.ok(!lines.some((l) => /signature BAD/.test(l)), webhook);

    const exit = await runner.interrupt();
    assert.deepEqual(exit, { code: 0, signal: null }, `runner exit after SIGINT; output:\n${output()}`);
    const survivors = pidsBefore.filter(isAlive);
    assert.deepEqual(survivors, [], 'no child process survives Ctrl-C');
  } finally {
    runner.kill();
  }
});

test("npm start with the user's own receiver already listening on 127.0.0.1: it gets the webhook, the banner names it", {
  timeout: 150_000,
}, async () => {
  const own = await startReceiver({ path: '/hooks' });
  const { path } = writeConfig(own.url);
  const runner = await startRunner(path);
  try {
    const curl = await runner.banner();
    const row = runner.lines.find((l) => /^ +receiver +http/.test(l));
    assert.equal(
      row?.trim().split(/ +/)[1],
      own.url,
      `the banner names the receiver in use; output:\n${runner.output()}`,
    );
    assert.match(row!, /your own: it was already listening/);
    assert.ok(!runner.lines.some((l) => /^ +demo receiver /.test(l)), 'no demo receiver is started');

    const { stdout: response } = await run('bash', ['-c', curl]);
    assert.match(response, /"success":\s*true/, `ingest accepted the curl call: ${response}`);
    const [webhook] = await own.waitFor(1, 15_000);
    assert.equal(webhook!.method, 'POST');
    assert.equal(webhook!.path, '/hooks');
    const body = JSON.parse(webhook!.body.toString('utf8')) as { type: string; event: string; userId: string };
    assert.deepEqual([body.type, body.event, body.userId], ['track', 'Demo Event', 'user-1']);

    const exit = await runner.interrupt();
    assert.deepEqual(exit, { code: 0, signal: null }, `runner exit after SIGINT; output:\n${runner.output()}`);
  } finally {
    runner.kill();
    await own.close();
  }
});
