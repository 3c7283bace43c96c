import { join } from 'node:path';
import {
  createRuntimeDir,
  findJava,
  freePort,
  NotReadyError,
  supervise,
  tailLog,
  waitUntilReady,
  type ChildExit,
  type Supervised,
} from '@sluice/local-runtime';
import { installSchemaRegistry, type Log } from './install.ts';

export {
  APICURIO_ARTIFACT,
  APICURIO_VERSION,
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
  exited: Promise<ChildExit>;
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

function tail(path: string): string {
  return tailLog(path) || '(log is empty)';
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
  const java = findJava({ needs: 'Apicurio Registry' }); // before a download: without Java it is of no use
  const install = await installSchemaRegistry({ log });
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
  const dir = await createRuntimeDir('sluice-schema-registry-');
  const tmp = dir.path;
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
  let server: Supervised;
  try {
    // A caller that forgets stop() can still exit: the watchdog then removes the registry and its dir.
    server = await supervise(java, args, {
      name: 'local-schema-registry',
      logFile,
      cleanupDir: tmp,
      stopGraceMs: STOP_GRACE_MS,
    });
  } catch (err) {
    await dir.remove();
    throw new SchemaRegistryStartError(`could not start ${java}: ${(err as Error).message}`, '');
  }
  const { pid, exited } = server;
  log(`starting Apicurio Registry (pid ${pid}) on ${url}`);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      await server.stop();
      await dir.remove();
    })());

  const started = Date.now();
  const timeoutMs = opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  try {
    await waitUntilReady(server, () => answers(url), { timeoutMs, intervalMs: 200 });
  } catch (err) {
    const logTail = tail(logFile);
    await stop();
    const exit = err instanceof NotReadyError ? err.exit : undefined;
    if (exit) {
      throw new SchemaRegistryStartError(
        `the schema registry exited during start-up (code ${exit.code}, signal ${exit.signal})`,
        logTail,
        /in use|already bound|BindException/i.test(logTail),
      );
    }
    throw new SchemaRegistryStartError(
      `the schema registry did not answer GET ${url}/subjects within ${timeoutMs / 1000} s`,
      logTail,
    );
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
