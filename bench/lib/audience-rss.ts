import { readFileSync, writeFileSync } from 'node:fs';

/** Resident memory of another process, from `/proc/<pid>/status` (Linux), in bytes. */
export interface RssReading {
  rss: number;
  /** Peak RSS (VmHWM) since the process started or since the last `resetPeak()`. */
  peak: number;
}

export function readRss(pid: number): RssReading {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/**
 * Samples a process's RSS every `intervalMs` during one phase. The kernel's own peak (VmHWM) is
 * reset at the start (`clear_refs` = 5) so the phase's peak is its own; the sampled maximum is kept
 * too, as a cross-check where the reset is not allowed.
 */
export class RssSampler {
  #timer: NodeJS.Timeout | undefined;
  #maxSampled = 0;
  #peakReset = false;
  private readonly pid: number;
  private readonly intervalMs: number;

  constructor(pid: number, intervalMs = 100) {
    this.pid = pid;
    this.intervalMs = intervalMs;
  }

  start(): this {
    try {
      writeFileSync(`/proc/${this.pid}/clear_refs`, '5');
      this.#peakReset = true;
    } catch {
      this.#peakReset = false;
    }
    this.#maxSampled = readRss(this.pid).rss;
    this.#timer = setInterval(() => {
      try {
        this.#maxSampled = Math.max(this.#maxSampled, readRss(this.pid).rss);
      } catch {
        // the process is gone; the last sample stands
      }
    }, this.intervalMs);
    return this;
  }

  /** Stops sampling; `peak` is VmHWM when it could be reset for this phase, else the sampled maximum. */
  stop(): { peak: number; maxSampled: number; kernelPeak: boolean } {
    clearInterval(this.#timer);
    const now = readRss(this.pid);
    this.#maxSampled = Math.max(this.#maxSampled, now.rss);
    return {
      peak: this.#peakReset ? Math.max(now.peak, this.#maxSampled) : this.#maxSampled,
      maxSampled: this.#maxSampled,
      kernelPeak: this.#peakReset,
    };
  }
}

export const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
