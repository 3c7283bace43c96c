// Installs into the per-user cache, the same way for every provisioned tool:
//
//   <parent>/<name>/            the installation, with its marker file inside
//   <parent>/<name>.lock        held while installing (withFileLock)
//   <parent>/.<name>.tmp-*      staging and scratch dirs of an install in progress
//
// The installation is built in a staging dir next to its final place and renamed into place with
// its marker already inside, so it exists complete or not at all. Under the lock, staging dirs of
// earlier attempts are leftovers of killed processes and are removed.

import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { withFileLock } from './lock.ts';

/** The marker file an installation holds when complete (JSON). */
export const INSTALLED_MARKER = '.installed';

export interface CacheInstall {
  /** The installation's final directory, e.g. `<cache>/kafka-4.1.1`. */
  home: string;
  /** What is installed, for messages: `Apache Kafka 4.1.1`. */
  what: string;
  /** Marker file name inside `home`. Default `INSTALLED_MARKER`. */
  marker?: string;
  /** Progress messages. Default: silent. */
  log?: (line: string) => void;
  /**
   * Fills `staging` (renamed to `home` afterwards); `scratch` is for downloads and is removed.
   * Returns what the marker records besides the time of the install.
   */
  build(dirs: { staging: string; scratch: string }): Promise<Record<string, unknown>>;
}

/** True if `home` holds a complete installation (its marker). */
export function isInstalled(home: string, marker: string = INSTALLED_MARKER): boolean {
  return existsSync(join(home, marker));
}

/**
 * Makes sure `spec.home` holds a complete installation, building it (once, under the lock) if it
 * does not. `installedNow` is true when this call built it.
 */
export async function installOnce(spec: CacheInstall): Promise<{ home: string; installedNow: boolean }> {
  const { home, what } = spec;
  const marker = spec.marker ?? INSTALLED_MARKER;
  const log = spec.log ?? (() => {});
  if (isInstalled(home, marker)) return { home, installedNow: false };
  const parent = dirname(home);
  const tmpPrefix = `.${basename(home)}.tmp-`;
  await mkdir(parent, { recursive: true });
  const lock = `${home}.lock`;
  return withFileLock(
    lock,
    async () => {
      // The other process may have finished meanwhile.
      if (isInstalled(home, marker)) return { home, installedNow: false };
      for (const entry of await readdir(parent)) {
        if (entry.startsWith(tmpPrefix)) await rm(join(parent, entry), { recursive: true, force: true });
      }
      const started = Date.now();
      log(`installing ${what} into ${home} ...`);
      const staging = await mkdtemp(join(parent, tmpPrefix));
      const scratch = await mkdtemp(join(parent, tmpPrefix));
      try {
        const facts = await spec.build({ staging, scratch });
        await writeFile(
          join(staging, marker),
          `${JSON.stringify({ ...facts, installedAt: new Date().toISOString() }, null, 2)}\n`,
        );
        await chmod(staging, 0o755);
        // A directory without a marker is an interrupted older attempt.
        if (existsSync(home)) await rm(home, { recursive: true, force: true });
        try {
          await rename(staging, home);
        } catch (err) {
          // Someone else (without the lock, e.g. one that judged it stale) finished first: fine.
          if (!isInstalled(home, marker)) throw err;
        }
        log(`installed ${what} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        return { home, installedNow: true };
      } finally {
        await rm(staging, { recursive: true, force: true });
        await rm(scratch, { recursive: true, force: true });
      }
    },
    () => log(`another process is installing ${what} (lock ${lock}); waiting ...`),
  );
}
