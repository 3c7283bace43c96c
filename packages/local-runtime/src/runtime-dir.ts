// The temp dir of one running server (config, logs, data), named `$TMPDIR/<prefix>*`, with an
// owner.json naming the process that made it. It is removed by its owner (`remove()`), by the
// owner's exit hook, or — when the owner died with its server running — by the watchdog; a dir
// whose owner and watchdog both died is swept by the next `createRuntimeDir` with that prefix.

import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { atExit } from './exit-hook.ts';
import { processExists, someProcessMentions } from './processes.ts';
import { supervisesDir } from './supervise.ts';

/** A dir younger than this is never swept (its owner may be writing owner.json right now). */
const SWEEP_MIN_AGE_MS = 60_000;

export interface RuntimeDir {
  readonly path: string;
  /** Removes the dir. Idempotent. */
  remove(): Promise<void>;
}

/** Sweeps abandoned dirs with this prefix, then makes a fresh one owned by this process. */
export async function createRuntimeDir(prefix: string): Promise<RuntimeDir> {
  sweepAbandoned(prefix);
  const path = await mkdtemp(join(tmpdir(), prefix));
  // At exit: remove it, unless a server is still running in it (the watchdog removes it after).
  const unregister = atExit(() => {
    if (!supervisesDir(path)) rmSync(path, { recursive: true, force: true });
  });
  let removed: Promise<void> | undefined;
  const remove = () =>
    (removed ??= (async () => {
      unregister();
      await rm(path, { recursive: true, force: true, maxRetries: 3 });
    })());
  try {
    await writeFile(join(path, 'owner.json'), `${JSON.stringify({ ownerPid: process.pid })}\n`);
  } catch (err) {
    await remove();
    throw err;
  }
  return { path, remove };
}

/**
 * Removes the `<prefix>*` dirs whose owner is gone, that are over a minute old, and that no live
 * process names on its command line (Linux; elsewhere they are kept).
 */
function sweepAbandoned(prefix: string): void {
  const root = tmpdir();
  let entries: string[];
  try {
    entries = readdirSync(root).filter((e) => e.startsWith(prefix));
  } catch {
    return;
  }
  for (const entry of entries) {
    const dir = join(root, entry);
    try {
      const { ownerPid } = JSON.parse(readFileSync(join(dir, 'owner.json'), 'utf8')) as { ownerPid: number };
      if (processExists(ownerPid) || Date.now() - statSync(dir).mtimeMs < SWEEP_MIN_AGE_MS) continue;
      if (someProcessMentions(dir)) continue;
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // not ours, or being created/removed: leave it
    }
  }
}
