import { spawnSync } from 'node:child_process';

/**
 * Runs this script again under `flags` (and exits with its status) unless it already has them, so
 * that a raw ceiling measured inside the benchmark process runs with the same V8 settings as the
 * service it is compared with.
 */
export function rerunWithNodeFlags(flags: readonly string[]): void {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  const missing = flags.filter((flag) => !given.includes(flag));
  if (missing.length === 0) return;
  const run = spawnSync(process.execPath, [...missing, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
  });
  process.exit(run.status ?? 1);
}
