import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Debian's chromium, which the browser tests drive with playwright-core. */
export const CHROMIUM = '/usr/bin/chromium';

/** Debian's chromium, installed with apt when absent and run as root; undefined (the test skips) otherwise. */
export function systemChromium(): string | undefined {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() === 0) {
    spawnSync('sh', ['-c', 'apt-get update -qq && apt-get install -y -qq chromium'], {
      stdio: 'ignore',
      timeout: 600_000,
    });
  }
  return existsSync(CHROMIUM) ? CHROMIUM : undefined;
}
