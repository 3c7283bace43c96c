import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, renameSync, rmSync } from 'node:fs';
import { chmod, chown } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createRuntimeDir,
  freePort,
  runToCompletion,
  supervise,
  tailLog,
  waitUntilReady,
  type Supervised,
} from '@sluice/local-runtime';
import { ensurePostgresInstalled, POSTGRES_VERSION } from './install.ts';

/**
 * PostgreSQL refuses to run as root. Run as root, the server runs as this unprivileged user
 * (`nobody`), from a copy of the installation outside root's home (which `nobody` cannot enter).
 */
const UNPRIVILEGED_UID = 65_534;
const READY_LINE = 'database system is ready to accept connections';

export interface LocalPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication, loopback only). */
  url: string;
  port: number;
  /** Stops the server (fast shutdown) and deletes its data. Idempotent. */
  stop(): Promise<void>;
}

export interface StartLocalPostgresOptions {
  log?: (line: string) => void;
  /** How long start-up may take. Default 60 s. */
  timeoutMs?: number;
}

/**
 * A throw-away PostgreSQL server on a free loopback port: fetched once into the cache, `initdb`
 * into a temp dir, `postgres` started under the local-runtime watchdog (so it is stopped with the
 * process that started it, however that process ends), its log in the temp dir.
 */
export async function startLocalPostgres(options: StartLocalPostgresOptions = {}): Promise<LocalPostgres> {
  const log = options.log ?? (() => {});
  const timeoutMs = options.timeoutMs ?? 60_000;
  const installation = await ensurePostgresInstalled(log);
  const asRoot = process.getuid?.() === 0;
  const home = asRoot ? runtimeCopy(installation.home) : installation.home;
  const dir = await createRuntimeDir('sluice-postgres-');
  const data = join(dir.path, 'data');
  const logFile = join(dir.path, 'postgres.log');
  const ids = asRoot ? { uid: UNPRIVILEGED_UID, gid: UNPRIVILEGED_UID } : {};
  let server: Supervised | undefined;
  try {
    if (asRoot) {
      await chmod(dir.path, 0o700);
      await chown(dir.path, UNPRIVILEGED_UID, UNPRIVILEGED_UID);
    }
    const initdb = await runToCompletion(
      join(home, 'bin', 'initdb'),
      ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
      { ...ids, keepChars: 8_000 },
    );
    if (initdb.code !== 0) throw new Error(`local-postgres: initdb failed (exit ${initdb.code}):\n${initdb.output}`);
    const port = await freePort();
    const args = [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      dir.path,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
    ];
    // SIGINT: PostgreSQL's fast shutdown (ends sessions, no wait for clients).
    server = await supervise(join(home, 'bin', 'postgres'), args, {
      name: 'local-postgres',
      logFile,
      cleanupDir: dir.path,
      stopSignal: 'SIGINT',
      stopGraceMs: 10_000,
      ...ids,
    });
    try {
      await waitUntilReady(server, async () => tailLog(logFile, 200).includes(READY_LINE), { timeoutMs });
    } catch (err) {
      throw new Error(`local-postgres: postgres ${(err as Error).message}:\n${tailLog(logFile)}`);
    }
    log(
      `local-postgres: PostgreSQL ${POSTGRES_VERSION} on 127.0.0.1:${port}${asRoot ? ' (as uid 65534: postgres refuses root)' : ''}`,
    );
    const running = server;
    let stopped: Promise<void> | undefined;
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      port,
      stop: () =>
        (stopped ??= (async () => {
          await running.stop();
          await dir.remove();
        })()),
    };
  } catch (err) {
    await server?.kill();
    await dir.remove();
    throw err;
  }
}

/** A world-readable copy of the installation in the temp dir, made once. */
function runtimeCopy(home: string): string {
  const copy = join(tmpdir(), `sluice-postgres-${POSTGRES_VERSION}-runtime`);
  if (!existsSync(join(copy, '.installed'))) {
    const staging = `${copy}.tmp-${process.pid}`;
    cpSync(home, staging, { recursive: true, verbatimSymlinks: true });
    spawnSyncChmod(staging);
    try {
      renameSync(staging, copy);
    } catch (err) {
      // Another process made the copy first: use it.
      rmSync(staging, { recursive: true, force: true });
      if (!existsSync(join(copy, '.installed'))) throw err;
    }
  }
  return copy;
}

function spawnSyncChmod(dir: string): void {
  // a+rX on the tree: `nobody` must read the libraries and run the binaries.
  const r = spawnSync('chmod', ['-R', 'a+rX', dir]);
  if (r.status !== 0) throw new Error(`local-postgres: chmod -R a+rX ${dir} failed`);
}
