import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * The watchdog is a tiny detached Node process (plain JavaScript) that outlives an abrupt death of
 * the process that started the registry: when that parent pid disappears it sends the registry
 * SIGTERM, then SIGKILL after the grace period, and removes the registry's temp dir. While the
 * parent is alive it does nothing; `stop()` kills it once the registry is down.
 *
 * Pids are compared together with their start time from /proc (Linux), so a pid reused by an
 * unrelated process is never signalled. Where /proc is missing, `kill(pid, 0)` alone is used.
 */
// biome-ignore lint/complexity/noUselessStringRaw: raw, so a backslash added to the script stays in it.
const WATCHDOG_SCRIPT = String.raw`
const fs = require('node:fs');
const [parentPid, parentStart, childPid, childStart, tmpDir, graceMs] = process.argv.slice(1);
const startTime = (pid) => {
  try {
    const stat = fs.readFileSync('/proc/' + pid + '/stat', 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] || '';
  } catch { return ''; }
};
const alive = (pid, start) => {
  try { process.kill(Number(pid), 0); } catch (e) { if (e.code !== 'EPERM') return false; }
  return start === '' || startTime(pid) === start;
};
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => {});
process.on('SIGHUP', () => {});
const cleanup = () => {
  try { fs.rmSync(tmpDir, { recursive: true, force: true }); } catch {}
  process.exit(0);
};
const timer = setInterval(() => {
  if (alive(parentPid, parentStart)) return;
  clearInterval(timer);
  if (!alive(childPid, childStart)) return cleanup();
  try { process.kill(Number(childPid), 'SIGTERM'); } catch {}
  const deadline = Date.now() + Number(graceMs);
  const wait = setInterval(() => {
    if (!alive(childPid, childStart)) { clearInterval(wait); return cleanup(); }
    if (Date.now() > deadline) { try { process.kill(Number(childPid), 'SIGKILL'); } catch {} }
  }, 100);
}, 500);
`;

/** Start time of a process (clock ticks since boot, field 22 of /proc/PID/stat), '' if unknown. */
export function processStartTime(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    return '';
  }
}

export function spawnWatchdog(childPid: number, tmpDir: string, graceMs: number): ChildProcess {
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // never load preloads or hooks into the watchdog
  const watchdog = spawn(
    process.execPath,
    [
      '-e',
      WATCHDOG_SCRIPT,
      String(process.pid),
      processStartTime(process.pid),
      String(childPid),
      processStartTime(childPid),
      tmpDir,
      String(graceMs),
    ],
    { detached: true, stdio: 'ignore', env },
  );
  watchdog.on('error', () => {}); // a missing watchdog must not crash the caller
  watchdog.unref();
  return watchdog;
}
