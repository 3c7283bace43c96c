import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, renameSync, rmSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '@sluice/local-kafka';
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
 * into a temp dir, `postgres` started, stopped with the process at the latest.
 */
export async function startLocalPostgres(options: StartLocalPostgresOptions = {}): Promise<LocalPostgres> {
  const log = options.log ?? (() => {});
  const installation = await ensurePostgresInstalled(log);
  const asRoot = process.getuid?.() === 0;
  const home = asRoot ? runtimeCopy(installation.home) : installation.home;
  const dir = await mkdtemp(join(tmpdir(), 'sluice-postgres-'));
  const data = join(dir, 'data');
  const ids = asRoot ? { uid: UNPRIVILEGED_UID, gid: UNPRIVILEGED_UID } : {};
  if (asRoot) {
    await chmod(dir, 0o700);
    await chown(dir, UNPRIVILEGED_UID, UNPRIVILEGED_UID);
  }
  await runOnce(
    join(home, 'bin', 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
    ids,
  );
  const port = (await freePorts(1))[0]!;
  const args = [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    dir,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
  ];
  const child = spawn(join(home, 'bin', 'postgres'), args, { stdio: ['ignore', 'pipe', 'pipe'], ...ids });
  const onExit = () => child.kill('SIGKILL');
  process.once('exit', onExit);
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`local-postgres: not ready after ${options.timeoutMs ?? 60_000} ms:\n${output}`)),
      options.timeoutMs ?? 60_000,
    );
    const watch = (b: Buffer) => {
      output = (output + b.toString()).slice(-8_000);
      if (output.includes(READY_LINE)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', watch);
    child.stderr!.on('data', watch);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`local-postgres: postgres exited (${code}) during start-up:\n${output}`));
    });
  });
  log(
    `local-postgres: PostgreSQL ${POSTGRES_VERSION} on 127.0.0.1:${port}${asRoot ? ' (as uid 65534: postgres refuses root)' : ''}`,
  );
  let stopped: Promise<void> | undefined;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: () =>
      (stopped ??= (async () => {
        process.off('exit', onExit);
        await stopChild(child);
        await rm(dir, { recursive: true, force: true });
      })()),
  };
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

function runOnce(command: string, args: string[], ids: { uid?: number; gid?: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...ids });
    const keep = (b: Buffer) => (output = (output + b.toString()).slice(-8_000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`local-postgres: ${command} failed (exit ${code}):\n${output}`)),
    );
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    // SIGINT: PostgreSQL's fast shutdown (ends sessions, no wait for clients).
    child.kill('SIGINT');
  });
}
