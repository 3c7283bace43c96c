// Runs `npm start` (scripts/start.sh) N times in a row and reports, for each run, how long every
// service took to answer 200 on /readyz and whether Ctrl-C (SIGINT to the process group, as a
// terminal sends it) stopped everything cleanly. Usage:
//   node scripts/start-soak.ts [--runs N] [--ready-timeout-s S]
// Run it beside a CPU hog (`yes > /dev/null`, one per core) to check start-up on a busy machine.
// Exits 1 when any run was not ready or did not stop cleanly.
import { type ChildProcess, spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { freePort } from '@sluice/local-runtime';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '20' }, 'ready-timeout-s': { type: 'string', default: '600' } },
});
const RUNS = Number(values.runs);
const READY_TIMEOUT_MS = Number(values['ready-timeout-s']) * 1000;
const STOP_TIMEOUT_MS = 120_000;
const PORT_VARS = ['INGEST_PORT', 'DELIVERER_PORT', 'RETRY_PORT', 'AUDIENCE_SYNC_PORT', 'DELIVERY_LOG_PORT'] as const;
const REPO_ROOT = new URL('../', import.meta.url).pathname;

interface RunResult {
  run: number;
  ready: boolean;
  /** From the spawn of `npm start` to the last of the five /readyz answering 200. */
  readyMs?: number;
  /** Per service port variable: ms to its first 200. */
  perService: Record<string, number>;
  cleanStop: boolean;
  note: string;
}

async function ready(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function oneRun(run: number): Promise<RunResult> {
  const ports = Object.fromEntries(await Promise.all(PORT_VARS.map(async (v) => [v, await freePort()] as const)));
  const child: ChildProcess = spawn('bash', ['scripts/start.sh'], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])) },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exitCode = code ?? (signal ? -1 : null);
      resolve();
    }),
  );
  const started = Date.now();
  const perService: Record<string, number> = {};
  let note = '';
  while (Object.keys(perService).length < PORT_VARS.length) {
    if (exitCode !== undefined) {
      note = `npm start exited (${exitCode}) before every service was ready`;
      break;
    }
    if (Date.now() - started > READY_TIMEOUT_MS) {
      note = `not ready within ${READY_TIMEOUT_MS / 1000} s`;
      break;
    }
    await Promise.all(
      PORT_VARS.filter((v) => perService[v] === undefined).map(async (v) => {
        if (await ready(ports[v]!)) perService[v] = Date.now() - started;
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const isReady = Object.keys(perService).length === PORT_VARS.length;
  const readyMs = isReady ? Math.max(...Object.values(perService)) : undefined;

  if (exitCode === undefined) process.kill(-child.pid!, 'SIGINT');
  const stopped = await Promise.race([
    exited.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), STOP_TIMEOUT_MS)),
  ]);
  // Give the group's last members (the broker's JVM) a moment to be reaped, then check none is left.
  const deadline = Date.now() + 30_000;
  while (groupAlive(child.pid!) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
  const leftovers = groupAlive(child.pid!);
  if (leftovers) process.kill(-child.pid!, 'SIGKILL');
  const unexpected = /stopped unexpectedly|failed to start|Start-up failed/.test(output);
  const cleanStop = isReady && stopped && exitCode === 0 && !leftovers && output.includes('Stopped.') && !unexpected;
  if (!cleanStop && note === '') {
    note = [
      !stopped && 'did not stop in time',
      exitCode !== 0 && `exit ${exitCode}`,
      leftovers && 'processes left behind',
      unexpected && 'a service stopped unexpectedly',
    ]
      .filter(Boolean)
      .join(', ');
  }
  if (!isReady || !cleanStop) {
    note += `\n--- last lines of npm start ---\n${output.split('\n').slice(-25).join('\n')}`;
  }
  return { run, ready: isReady, ...(readyMs !== undefined && { readyMs }), perService, cleanStop, note };
}

const results: RunResult[] = [];
for (let run = 1; run <= RUNS; run++) {
  const r = await oneRun(run);
  results.push(r);
  const per = PORT_VARS.map(
    (v) => `${v.replace('_PORT', '').toLowerCase()} ${((r.perService[v] ?? Number.NaN) / 1000).toFixed(1)}`,
  );
  console.log(
    `run ${run}/${RUNS}: ${r.ready ? `ready in ${((r.readyMs ?? 0) / 1000).toFixed(1)} s` : 'NOT READY'}` +
      ` (${per.join(', ')}); ${r.cleanStop ? 'clean stop' : 'NOT a clean stop'}${r.note ? `: ${r.note}` : ''}`,
  );
}
const times = results.flatMap((r) => (r.readyMs === undefined ? [] : [r.readyMs / 1000])).sort((a, b) => a - b);
const readyCount = results.filter((r) => r.ready).length;
const cleanCount = results.filter((r) => r.cleanStop).length;
const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]?.toFixed(1) ?? '-';
console.log(
  `summary: ready ${readyCount}/${RUNS}, clean stop ${cleanCount}/${RUNS}; time to ready (s) ` +
    `min ${times[0]?.toFixed(1) ?? '-'}, median ${at(0.5)}, max ${times.at(-1)?.toFixed(1) ?? '-'}`,
);
process.exit(readyCount === RUNS && cleanCount === RUNS ? 0 : 1);
