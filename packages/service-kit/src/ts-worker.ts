import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker thread whose entry point is a TypeScript module. On Node 20 a worker does not
 * inherit the parent's `--import tsx` hooks, so the thread first registers tsx and then imports
 * `entry` through it.
 */
export function startTsWorker(entry: URL, options: Omit<WorkerOptions, 'eval'> = {}): Worker {
  const href = JSON.stringify(entry.href);
  return new Worker(`import('tsx/esm/api').then(({ tsImport }) => tsImport(${href}, ${href}))`, {
    ...options,
    eval: true,
  });
}
