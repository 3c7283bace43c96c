import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findJava, installSchemaRegistry, type Log } from './install.ts';
import { spawnWatchdog } from './watchdog.ts';

export {
  APICURIO_ARTIFACT,
  APICURIO_VERSION,
  findJava,
  installSchemaRegistry,
  isSchemaRegistryInstalled,
  schemaRegistryInstallDir,
  type Installation,
  type Log,
} from './install.ts';

/** Path of Apicurio's Confluent-compatible API; `url` below already includes it. */
export const CCOMPAT_PATH = '/apis/ccompat/v7';

export type CompatibilityLevel =
  | 'BACKWARD'
  | 'BACKWARD_TRANSITIVE'
  | 'FORWARD'
  | 'FORWARD_TRANSITIVE'
  | 'FULL'
  | 'FULL_TRANSITIVE'
  | 'NONE';

export interface StartLocalSchemaRegistryOptions {
  /**
   * Accepted for symmetry with registries that keep their schemas in Kafka. Apicurio runs here
   * with in-memory storage and does not use Kafka: every start is a fresh, empty registry.
   */
  kafkaBrokers?: string;
  /** Port on 127.0.0.1; default: a free one. */
  port?: number;
  /** How long to wait for `GET /subjects` to answer; default 60 s. */
  startTimeoutMs?: number;
  /** Global compatibility level; default BACKWARD, as Confluent Schema Registry (Apicurio's own default is NONE). */
  compatibility?: CompatibilityLevel;
  /** Progress messages (install, start); default: silent. */
  log?: Log;
}

export interface LocalSchemaRegistry {
  /** Base URL of the Confluent-compatible API, e.g. http://127.0.0.1:41234/apis/ccompat/v7 */
  url: string;
  /** Pid of the registry's JVM. */
  pid: number;
  /** SIGTERM, SIGKILL after 10 s, then removes its temp dir. Idempotent. */
  stop(): Promise<void>;
  /** The registry's log (inside its temp dir, removed by stop()). */
  logFile: string;
  /** Settles when the registry process exits (for whatever reason). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const STOP_GRACE_MS = 10_000;
const DEFAULT_START_TIMEOUT_MS = 60_000;
const PORT_ATTEMPTS = 3;

export class SchemaRegistryStartError extends Error {
  readonly logTail: string;
  readonly portInUse: boolean;
  constructor(message: string, logTail: string, portInUse = false) {
    super(`${message}\n--- last lines of the schema registry log ---\n${logTail}`);
    this.logTail = logTail;
    this.portInUse = portInUse;
    this.name = 'SchemaRegistryStartError';
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

function tail(path: string, lines = 40, maxBytes = 64 * 1024): string {
  try {
    const size = statSync(path).size;
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    const fd = openSync(path, 'r');
    try {
      readSync(fd, buffer, 0, length, size - length);
    } finally {
      closeSync(fd);
    }
    return buffer.toString('utf8').split('\n').slice(-lines).join('\n').trimEnd() || '(log is empty)';
  } catch (err) {
    return `(no log: ${(err as Error).message})`;
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/subjects`, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/** Resolves true when `promise` settles within `ms`, false otherwise (and leaves no timer behind). */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode });
      return;
    }
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: null }));
  });
}

/**
 * Starts a real Apicurio Registry (installed into the cache on first use) with in-memory storage
 * on a free port of 127.0.0.1, and resolves once its Confluent-compatible API answers
 * `GET /subjects`. Callers that honour an existing `SCHEMA_REGISTRY_URL` should not call this when
 * it is set.
 */
export async function startLocalSchemaRegistry(
  opts: StartLocalSchemaRegistryOptions = {},
): Promise<LocalSchemaRegistry> {
  const log = opts.log ?? (() => {});
  const install = await installSchemaRegistry({ log });
  const java = findJava();
  const attempts = opts.port === undefined ? PORT_ATTEMPTS : 1;
  for (let attempt = 1; ; attempt++) {
    const port = opts.port ?? (await freePort());
    try {
      return await launch(java, install.runnerJar, port, opts, log);
    } catch (err) {
      if (err instanceof SchemaRegistryStartError && err.portInUse && attempt < attempts) {
        log(`port ${port} was taken before the registry could bind it; retrying on another port`);
        continue;
      }
      throw err;
    }
  }
}

async function launch(
  java: string,
  runnerJar: string,
  port: number,
  opts: StartLocalSchemaRegistryOptions,
  log: Log,
): Promise<LocalSchemaRegistry> {
  const tmp = await mkdtemp(join(tmpdir(), 'sluice-schema-registry-'));
  const logFile = join(tmp, 'registry.log');
  const url = `http://127.0.0.1:${port}${CCOMPAT_PATH}`;
  const args = [
    '-XX:-UsePerfData', // no /tmp/hsperfdata_<user>/<pid> file
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1', // faster start; a test registry is never CPU bound
    '-Xss512k',
    '-Xms32m',
    '-Xmx256m',
    `-Djava.io.tmpdir=${tmp}`,
    `-Dvertx.cacheDirBase=${join(tmp, 'vertx-cache')}`,
    '-Dquarkus.http.host=127.0.0.1',
    `-Dquarkus.http.port=${port}`,
    '-Dquarkus.http.access-log.enabled=false',
    `-Dapicurio.import.work-dir=${tmp}`,
    `-Dapicurio.storage.snapshot.location=${tmp}`,
    '-Dapicurio.ccompat.use-canonical-hash=true', // same schema, other whitespace: same id (as Confluent)
    `-Dapicurio.rules.global.compatibility=${opts.compatibility ?? 'BACKWARD'}`,
    '-jar',
    runnerJar,
  ];
  const out = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(java, args, { cwd: tmp, stdio: ['ignore', out, out] });
  } finally {
    closeSync(out);
  }
  child.on('error', () => {}); // surfaced through `exited`
  child.unref(); // a caller that forgets stop() can still exit; the watchdog then cleans up
  const exited = exitOf(child);
  const pid = child.pid;
  if (pid === undefined) {
    const result = await exited;
    await rm(tmp, { recursive: true, force: true });
    throw new SchemaRegistryStartError(`could not start ${java} (${JSON.stringify(result)})`, '');
  }
  const watchdog = spawnWatchdog(pid, tmp, STOP_GRACE_MS);
  log(`starting Apicurio Registry (pid ${pid}) on ${url}`);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        if (!(await within(exited, STOP_GRACE_MS))) {
          child.kill('SIGKILL');
          await exited;
        }
      }
      if (watchdog.exitCode === null && watchdog.signalCode === null) {
        const watchdogExited = exitOf(watchdog);
        watchdog.kill('SIGKILL');
        await within(watchdogExited, 2_000);
      }
      await rm(tmp, { recursive: true, force: true });
    })());

  const started = Date.now();
  const timeoutMs = opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  let dead = false;
  void exited.then(() => {
    dead = true;
  });
  for (;;) {
    if (await answers(url)) break;
    if (dead) {
      const logTail = tail(logFile);
      const result = await exited;
      await stop();
      throw new SchemaRegistryStartError(
        `the schema registry exited during start-up (code ${result.code}, signal ${result.signal})`,
        logTail,
        /in use|already bound|BindException/i.test(logTail),
      );
    }
    if (Date.now() - started > timeoutMs) {
      const logTail = tail(logFile);
      await stop();
      throw new SchemaRegistryStartError(
        `the schema registry did not answer GET ${url}/subjects within ${timeoutMs / 1000} s`,
        logTail,
      );
    }
    await sleep(200);
  }
  // Apicurio enforces the -D default rule but reports "NONE" from GET /config until a global rule is
  // stored; storing it makes GET /config answer like Confluent's registry does.
  const compatibility = opts.compatibility ?? 'BACKWARD';
  try {
    const res = await fetch(`${url}/config`, {
      method: 'PUT',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ compatibility }),
      signal: AbortSignal.timeout(10_000),
    });
    if (!res.ok) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  } catch (err) {
    const logTail = tail(logFile);
    await stop();
    throw new SchemaRegistryStartError(
      `could not set the global compatibility to ${compatibility}: ${String(err)}`,
      logTail,
    );
  }
  log(`Apicurio Registry ready on ${url} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { url, pid, stop, exited, logFile };
}
