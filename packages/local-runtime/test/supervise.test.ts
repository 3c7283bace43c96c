import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import {
  createRuntimeDir,
  NotReadyError,
  processExists,
  supervise,
  tailLog,
  waitUntilReady,
  type Supervised,
  type SuperviseOptions,
} from '../src/index.ts';

const OWNER = fileURLToPath(new URL('./fixtures/owner.ts', import.meta.url));

async function eventually(condition: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await sleep(50);
  }
  return condition();
}

/** Runs the owner fixture until it has reported its server; returns the owner and what it reported. */
async function startOwner(how: 'wait' | 'exit' | 'end') {
  const owner = spawn(process.execPath, [OWNER, how], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => owner.once('exit', () => resolve()));
  let out = '';
  owner.stdout.on('data', (b: Buffer) => (out += b.toString()));
  assert.ok(await eventually(() => out.includes('\n'), 20_000), 'the owner reported its server');
  const { pid, dir } = JSON.parse(out.split('\n')[0]!) as { pid: number; dir: string };
  return { owner, pid, dir, exited };
}

describe('the watchdog: a supervised server does not outlive its owner', () => {
  const leftovers: number[] = [];
  after(() => {
    for (const pid of leftovers) if (processExists(pid)) process.kill(pid, 'SIGKILL');
  });

  for (const how of ['wait', 'exit', 'end'] as const) {
    const title = {
      wait: 'owner killed with SIGKILL',
      exit: 'owner calls process.exit() without stopping it',
      end: 'owner simply ends without stopping it',
    }[how];
    test(`${title}: the server is killed and its dir removed`, async () => {
      const { owner, pid, dir, exited } = await startOwner(how);
      leftovers.push(pid);
      assert.ok(existsSync(dir));
      if (how === 'wait') {
        assert.ok(processExists(pid), 'the server runs while its owner does');
        owner.kill('SIGKILL');
      }
      // The owner's end is awaited as an event (on a busy machine an event loop running dry takes
      // what it takes); from then on the watchdog has its own few hundred milliseconds, bounded here
      // generously so a starved machine does not pass for a watchdog that never acts.
      await exited;
      assert.ok(await eventually(() => !processExists(pid), 30_000), `server ${pid} is gone`);
      assert.ok(await eventually(() => !existsSync(dir), 30_000), `${dir} is gone`);
    });
  }
});

/** Runs `fn` with a server (`node -e script`) supervised in a fresh runtime dir, removed afterwards. */
async function withServer(
  script: string,
  options: Partial<SuperviseOptions>,
  fn: (server: Supervised, dir: string) => Promise<void>,
): Promise<void> {
  const dir = await createRuntimeDir('sluice-runtime-test-');
  try {
    const server = await supervise(process.execPath, ['-e', script], {
      name: 'test',
      logFile: join(dir.path, 'server.log'),
      cleanupDir: dir.path,
      ...options,
    });
    try {
      await fn(server, dir.path);
    } finally {
      await server.kill();
    }
  } finally {
    await dir.remove();
  }
  assert.equal(existsSync(dir.path), false, 'remove() removes the dir');
}

const FOREVER = 'setInterval(() => {}, 1 << 30)';

describe('supervise', () => {
  test('stop() sends the stop signal and resolves with how the server exited', async () => {
    await withServer(FOREVER, {}, async (server, dir) => {
      assert.equal(server.running, true);
      assert.deepEqual(await server.stop(), { code: null, signal: 'SIGTERM' });
      assert.equal(server.running, false);
      assert.equal(processExists(server.pid), false);
      assert.ok(existsSync(dir), 'a stop by the owner leaves the dir to the owner');
    });
  });

  test('a server that ignores the stop signal is killed after the grace period', async () => {
    const ignoring = `process.on('SIGINT', () => {}); console.log('ignoring SIGINT'); ${FOREVER}`;
    await withServer(ignoring, { stopSignal: 'SIGINT', stopGraceMs: 300 }, async (server, dir) => {
      const log = join(dir, 'server.log');
      assert.ok(await eventually(() => tailLog(log).includes('ignoring SIGINT')), 'its output goes to the log file');
      const started = Date.now();
      assert.deepEqual(await server.stop(), { code: null, signal: 'SIGKILL' });
      assert.ok(Date.now() - started >= 250, 'it waited for the grace period first');
    });
  });

  test('a server that exits by itself reports its exit code', async () => {
    await withServer('console.log("bye"); process.exit(3)', {}, async (server) => {
      assert.deepEqual(await server.exited, { code: 3, signal: null });
      assert.equal(server.running, false);
      await assert.rejects(
        waitUntilReady(server, async () => true, { timeoutMs: 1_000 }),
        (err: unknown) => err instanceof NotReadyError && /exit code 3/.test(err.message) && err.exit?.code === 3,
      );
    });
  });

  test('waitUntilReady gives up after its timeout, and resolves once the probe answers', async () => {
    await withServer(FOREVER, {}, async (server) => {
      await assert.rejects(
        waitUntilReady(server, async () => false, { timeoutMs: 200, intervalMs: 20 }),
        (err: unknown) => err instanceof NotReadyError && /within 0\.2 s/.test(err.message) && !err.exit,
      );
      let calls = 0;
      await waitUntilReady(server, async () => ++calls === 3, { timeoutMs: 5_000, intervalMs: 10 });
      assert.equal(calls, 3);
    });
  });

  test('a command that cannot be run rejects, naming it', async () => {
    const dir = await createRuntimeDir('sluice-runtime-test-');
    try {
      await assert.rejects(
        supervise(join(dir.path, 'no-such-binary'), [], { name: 'test', logFile: join(dir.path, 'server.log') }),
        /test: cannot run .*no-such-binary: spawn .*ENOENT/,
      );
    } finally {
      await dir.remove();
    }
  });
});
