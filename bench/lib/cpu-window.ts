import { readdirSync, readFileSync } from 'node:fs';

/** CPU seconds (user + system) of a process, or of its main thread only, from /proc (Linux); undefined elsewhere. */
function processCpuSeconds(pid: number, mainThreadOnly = false): number | undefined {
  try {
    const stat = readFileSync(mainThreadOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks (100/s)
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds used over a window by the threads of this process with the given OS name (e.g.
 * `producer-thread`), counting only threads alive at both ends; undefined where /proc is missing.
 */
export function startThreadCpuWindow(name: string): () => number | undefined {
  const threads = () => {
    const seconds = new Map<string, number>();
    try {
      for (const tid of readdirSync(`/proc/${process.pid}/task`)) {
        const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
        if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== name) continue;
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        seconds.set(tid, (Number(fields[11]) + Number(fields[12])) / 100);
      }
    } catch {
      return undefined;
    }
    return seconds;
  };
  const at0 = threads();
  return () => {
    const at1 = threads();
    if (!at0 || !at1) return undefined;
    let used = 0;
    for (const [tid, seconds] of at1) used += seconds - (at0.get(tid) ?? seconds);
    return used;
  };
}

/** Busy CPU seconds of the whole machine (all cores), from /proc/stat. */
function machineBusySeconds(): number | undefined {
  try {
    const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
    // user nice system idle iowait irq softirq steal: everything but idle and iowait is busy.
    const [user, nice, system, , , irq, softirq, steal] = values.map(Number);
    return (user! + nice! + system! + irq! + softirq! + steal!) / 100;
  } catch {
    return undefined;
  }
}

export interface CpuSplit {
  /** Cores used on average over the window, per party. */
  bench: number;
  /** The bench process's main thread alone (its event loop; the rest is workers and V8's helpers). */
  benchMainThread?: number;
  /** The child process watched (the service under test, or the receiver). */
  child?: number;
  /** Everything else on the machine: the broker, and any other load. */
  others?: number;
}

/** Measures how many cores the bench process, one child process and everything else used over a window. */
export function startCpuWindow(childPid?: number): () => CpuSplit {
  const window = startProcessCpuWindow({ bench: process.pid, ...(childPid !== undefined && { child: childPid }) });
  // process.cpuUsage also works where /proc does not (the bench share is then all there is).
  const bench0 = process.cpuUsage();
  const benchMain0 = processCpuSeconds(process.pid, true);
  return () => {
    const { seconds, cpu } = window();
    const b = process.cpuUsage(bench0);
    const benchMain1 = processCpuSeconds(process.pid, true);
    return {
      bench: (b.user + b.system) / 1e6 / seconds,
      ...(benchMain0 !== undefined &&
        benchMain1 !== undefined && { benchMainThread: (benchMain1 - benchMain0) / seconds }),
      ...(cpu.child !== undefined && { child: cpu.child / seconds }),
      ...(cpu.other !== undefined && { others: cpu.other / seconds }),
    };
  };
}

export function formatCpu(split: CpuSplit, childLabel = 'ingest'): string {
  const parts = [`bench ${split.bench.toFixed(2)}`];
  if (split.child !== undefined) parts.push(`${childLabel} ${split.child.toFixed(2)}`);
  if (split.others !== undefined) parts.push(`broker+other ${split.others.toFixed(2)}`);
  return `${parts.join(', ')} cores`;
}

/**
 * CPU seconds each named process used over a window, plus `other`: the rest of the machine's busy
 * time (the broker, the kernel, anything else). For splitting an end-to-end run by process.
 */
export function startProcessCpuWindow(
  pids: Record<string, number>,
): () => { seconds: number; cpu: Record<string, number> } {
  const t0 = performance.now();
  const at0 = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, processCpuSeconds(pid)]));
  const machine0 = machineBusySeconds();
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    const cpu: Record<string, number> = {};
    for (const [name, pid] of Object.entries(pids)) {
      const a = at0[name];
      const b = processCpuSeconds(pid);
      if (a !== undefined && b !== undefined) cpu[name] = b - a;
    }
    const machine1 = machineBusySeconds();
    if (machine0 !== undefined && machine1 !== undefined)
      cpu.other = Math.max(0, machine1 - machine0 - Object.values(cpu).reduce((x, y) => x + y, 0));
    return { seconds, cpu };
  };
}
