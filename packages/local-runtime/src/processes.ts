import { readdirSync, readFileSync } from 'node:fs';

/** True if a process with this pid exists (also when it belongs to another user). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * True if some live process has `text` on its command line (Linux, from /proc). Where /proc cannot
 * be read the answer is true: callers use it to decide whether something may be removed.
 */
export function someProcessMentions(text: string): boolean {
  if (process.platform !== 'linux') return true;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return true;
  }
  for (const pid of pids) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text)) return true;
    } catch {
      // process gone
    }
  }
  return false;
}
