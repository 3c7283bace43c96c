// A cross-process lock file: created with O_EXCL, holding "pid host time nonce". Waiters poll; a
// lock whose holder is gone (same host) or that is very old is broken. Correctness of the installs
// does not depend on it (their rename is the commit point): it keeps two processes from
// downloading the same thing at once.

import { randomBytes } from 'node:crypto';
import { open, readFile, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { processExists } from './processes.ts';

/** A lock older than this whose holder cannot be seen is considered abandoned. */
const STALE_LOCK_MS = 15 * 60_000;
/** A lock file still empty after this long: its holder died between creating and writing it. */
const STALE_EMPTY_LOCK_MS = 10_000;
const POLL_MS = 500;

/** Runs `fn` holding the lock file `path`; `onWait` is called once if it has to wait. */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, onWait?: () => void): Promise<T> {
  const token = `${process.pid} ${hostname()} ${Date.now()} ${randomBytes(4).toString('hex')}`;
  let announced = false;
  for (;;) {
    try {
      const fh = await open(path, 'wx');
      await fh.writeFile(token);
      await fh.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (await isStale(path)) {
      await rm(path, { force: true });
      continue;
    }
    if (!announced) {
      onWait?.();
      announced = true;
    }
    await sleep(POLL_MS);
  }
  try {
    return await fn();
  } finally {
    // Only remove the lock if it is still ours (a stale-judged lock may have been taken over).
    const content = await readFile(path, 'utf8').catch(() => '');
    if (content === token) await rm(path, { force: true });
  }
}

async function isStale(path: string): Promise<boolean> {
  const [content, st] = await Promise.all([readFile(path, 'utf8').catch(() => ''), stat(path).catch(() => undefined)]);
  if (!st) return false; // vanished: just retry
  const [pidText, host] = content.split(' ');
  const pid = Number(pidText);
  if (host === hostname() && Number.isInteger(pid) && pid > 0 && !processExists(pid)) return true;
  const age = Date.now() - st.mtimeMs;
  return content === '' ? age > STALE_EMPTY_LOCK_MS : age > STALE_LOCK_MS;
}
