import { readdirSync, readFileSync } from 'node:fs';

/** Parent pid of `pid` from /proc, or undefined if it is gone. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 4, after the parenthesised command name (which may contain spaces).
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** Every live descendant of `root` (children, grandchildren…). */
export function descendants(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const ppid = parentOf(Number(entry));
    if (ppid !== undefined) parents.set(Number(entry), ppid);
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const [pid, ppid] of parents) {
      if (ppid === parent) {
        found.push(pid);
        queue.push(pid);
      }
    }
  }
  return found;
}

/** True while the process exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}
