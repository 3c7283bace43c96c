// The watchdog between a Node process (the owner) and a server it runs (a JVM, postgres).
// Plain JavaScript on purpose: it is started with `node watchdog.mjs`, so it is cheap.
//
//   node watchdog.mjs [--cleanup DIR] [--uid N --gid N] -- <command> [args...]
//
// - Spawns the command with this process's stdout/stderr (the owner points them at a log file),
//   as user/group N if given.
// - Tells the owner the command's pid over the IPC channel, and its exit status.
// - If the owner disappears (IPC channel closed, or this process re-parented — even after a
//   SIGKILL of the owner), it SIGKILLs the command, removes DIR if given, and exits.
// - SIGTERM/SIGINT/SIGHUP sent to the watchdog are forwarded to the command as SIGTERM.
// - The owner sends {type:'stopping'} before it stops the command itself, so that the watchdog
//   then exits at once (otherwise it waits 300 ms to tell an owner exit from a crash).
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';

const argv = process.argv.slice(2);
let cleanupDir;
const ids = {};
while (argv.length > 0 && argv[0] !== '--') {
  const flag = argv.shift();
  if (flag === '--cleanup') cleanupDir = argv.shift();
  else if (flag === '--uid') ids.uid = Number(argv.shift());
  else if (flag === '--gid') ids.gid = Number(argv.shift());
  else fail(`unknown option ${flag}`);
}
argv.shift(); // '--'
const [command, ...args] = argv;
if (!command) fail('no command');

const ownerPid = process.ppid;
let orphaned = false;
let stopRequested = false;

const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'], ...ids });

child.on('error', (err) => {
  send({ type: 'error', code: err.code, message: err.message });
  process.exitCode = 127;
  setImmediate(() => process.exit(127));
});
if (child.pid !== undefined) send({ type: 'spawned', pid: child.pid });

child.on('exit', (code, signal) => {
  send({ type: 'exit', code, signal });
  const status = code ?? 128 + (signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : 1);
  // Unless the owner asked for this exit, it may be exiting right now (its exit hook SIGKILLs
  // the command): give the channel a moment to report that, so the dir is not left behind.
  setTimeout(
    () => {
      if (orphaned || !process.connected || process.ppid !== ownerPid) {
        if (cleanupDir) removeDir(cleanupDir);
      }
      process.exit(status);
    },
    stopRequested && !orphaned ? 0 : 300,
  );
});

function onOwnerGone() {
  if (orphaned) return;
  orphaned = true;
  try {
    child.kill('SIGKILL');
  } catch {
    // already gone
  }
  // Make sure we do not linger if the exit event never comes.
  setTimeout(() => {
    if (cleanupDir) removeDir(cleanupDir);
    process.exit(1);
  }, 10_000).unref();
}

process.on('disconnect', onOwnerGone);
process.on('message', (m) => {
  if (m && m.type === 'stopping') stopRequested = true;
});
setInterval(() => {
  if (process.ppid !== ownerPid) onOwnerGone();
}, 500).unref();

for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(sig, () => {
    try {
      child.kill('SIGTERM');
    } catch {
      // already gone
    }
  });
}

function send(message) {
  if (process.connected) {
    try {
      process.send(message);
    } catch {
      // owner gone
    }
  }
}

function removeDir(dir) {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    // best effort
  }
}

function fail(message) {
  process.stderr.write(`local-runtime watchdog: ${message}\n`);
  process.exit(2);
}
