import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { processExists } from '@sluice/local-runtime';
import { kafkaVersionFromEnv } from '../src/index.ts';

const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: PACKAGE_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('run: with KAFKA_BROKERS set, provisions nothing and passes the exit code through', async () => {
  const script = 'process.stdout.write(process.env.KAFKA_BROKERS ?? ""); process.exit(3)';
  const r = await cli(['run', '--', process.execPath, '-e', script], {
    ...process.env,
    KAFKA_BROKERS: 'elsewhere:9092',
  });
  assert.equal(r.code, 3);
  assert.equal(r.stdout, 'elsewhere:9092');
  assert.doesNotMatch(r.stderr, /started in/);
});

test('run: starts a broker, hands it to the command, removes it afterwards', { timeout: 120_000 }, async () => {
  // The command checks that something accepts connections at KAFKA_BROKERS, then exits 5.
  const script = `
    const [host, port] = process.env.KAFKA_BROKERS.split(':');
    require('node:net').connect(Number(port), host)
      .on('connect', () => { process.stdout.write('connected ' + process.env.KAFKA_BROKERS); process.exit(5); })
      .on('error', (e) => { console.error(e.message); process.exit(1); });`;
  const env = { ...process.env };
  delete env.KAFKA_BROKERS;
  const r = await cli(['run', '--', process.execPath, '-e', script], env);
  const version = kafkaVersionFromEnv().replaceAll('.', '\\.');
  const started = `local-kafka: Apache Kafka ${version} \\(pid (\\d+)\\) on (127\\.0\\.0\\.1:\\d+), started in [\\d.]+ s`;
  const line = new RegExp(started).exec(r.stderr);
  assert.ok(line, `no start-up line in stderr:\n${r.stderr}`);
  assert.equal(r.stdout, `connected ${line[2]}`);
  assert.equal(r.code, 5, r.stderr);
  assert.equal(processExists(Number(line[1])), false, 'the broker JVM is gone');
});

test('usage errors exit with 2', async () => {
  const r = await cli(['frobnicate'], process.env);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /usage:/);
});
