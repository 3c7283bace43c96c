import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU seconds (user + system) of each thread of a process, summed by thread name (`comm`: Node
 * names its event loop `MainThread`, worker_threads by their `name` (else `WorkerThread`), V8's GC and compiler helpers
 * `V8Worker`), from /proc (Linux); empty elsewhere.
 */
function threadCpuByName(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byName;
  }
  for (const tid of tids) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return byName;
}

/** CPU seconds per thread name of `pid` over a window (threads that ended meanwhile are not counted). */
export function startThreadCpuWindow(pid: number): () => Map<string, number> {
  const before = threadCpuByName(pid);
  return () => {
    const used = new Map<string, number>();
    for (const [name, seconds] of threadCpuByName(pid)) used.set(name, seconds - (before.get(name) ?? 0));
    return used;
  };
}
