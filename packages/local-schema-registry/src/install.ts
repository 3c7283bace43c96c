import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { processExists, sluiceCacheDir } from '@sluice/local-kafka';

/** Apicurio Registry release used. 3.0.x is the newest line whose build targets Java 17. */
export const APICURIO_VERSION = '3.0.9';
/** Maven coordinates of the runnable distribution (runner jar + lib/), fetched with `mvn`. */
export const APICURIO_ARTIFACT = `io.apicurio:apicurio-registry-app:${APICURIO_VERSION}:tar.gz:all`;
const RUNNER_JAR = `apicurio-registry-app-${APICURIO_VERSION}-runner.jar`;
/** SHA-256 of that archive, checked after download. */
const APICURIO_ARCHIVE_SHA256 = '2b28181501a20cbf6efcd77f9b7153908fc01f3d3a7c32024c0bd9e1b04c8a43';
/**
 * Plugin 2.8 on purpose: 3.x reads the artifact's descriptor, which needs the parent POM
 * io.apicurio:apicurio-registry:3.0.9, and that POM was never published to Maven Central.
 */
const MAVEN_DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:2.8';
const MIN_JAVA = 17;
const LOCK_WAIT_MS = 15 * 60_000;

export type Log = (message: string) => void;

export interface Installation {
  /** Folder holding the runner jar and its lib/. */
  dir: string;
  runnerJar: string;
  /** True when this call downloaded it, false when it was already in the cache. */
  installedNow: boolean;
}

export function schemaRegistryInstallDir(): string {
  return join(sluiceCacheDir(), 'schema-registry', `apicurio-registry-${APICURIO_VERSION}`);
}

const MARKER = '.sluice-installed.json';

export function isSchemaRegistryInstalled(): boolean {
  return existsSync(join(schemaRegistryInstallDir(), MARKER));
}

/** The java binary to use: `$SLUICE_JAVA`, else `$JAVA_HOME/bin/java`, else `java` on PATH. */
export function findJava(): string {
  const fromJavaHome = process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : undefined;
  const java = process.env.SLUICE_JAVA || (fromJavaHome && existsSync(fromJavaHome) ? fromJavaHome : 'java');
  const probe = spawnSync(java, ['-version'], { encoding: 'utf8' });
  if (probe.error) {
    throw new Error(
      `Apicurio Registry needs Java ${MIN_JAVA}+, but '${java}' could not be run (${probe.error.message}). ` +
        `Install a JRE (Debian: apt-get install openjdk-17-jre-headless) or set JAVA_HOME / SLUICE_JAVA.`,
    );
  }
  const match = /version "(\d+)(?:\.(\d+))?/.exec(`${probe.stderr}${probe.stdout}`);
  const major = match ? (match[1] === '1' ? Number(match[2]) : Number(match[1])) : NaN;
  if (!(major >= MIN_JAVA)) {
    throw new Error(`Apicurio Registry needs Java ${MIN_JAVA}+, but '${java} -version' says: ${probe.stderr.trim()}`);
  }
  return java;
}

/** A cross-process lock: an exclusive mkdir, stolen when its owner (same host) is gone. */
async function withLock<T>(lockDir: string, log: Log, fn: () => Promise<T>): Promise<T> {
  const owner = join(lockDir, 'owner.json');
  const deadline = Date.now() + LOCK_WAIT_MS;
  let announced = false;
  for (;;) {
    try {
      await mkdir(lockDir);
      await writeFile(owner, JSON.stringify({ pid: process.pid, host: hostname(), at: new Date().toISOString() }));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let stale = false;
    try {
      const info = JSON.parse(readFileSync(owner, 'utf8')) as { pid: number; host: string };
      stale = info.host === hostname() && !processExists(info.pid);
    } catch {
      // owner.json not written yet (or unreadable): stale only if the lock dir is old
      try {
        stale = Date.now() - statSync(lockDir).mtimeMs > 60_000;
      } catch {
        stale = false;
      }
    }
    if (stale) {
      await rm(lockDir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for the install lock ${lockDir}`);
    if (!announced) {
      log(`waiting for another process installing the schema registry (lock ${lockDir})`);
      announced = true;
    }
    await sleep(500);
  }
  try {
    return await fn();
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function run(cmd: string, args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // -XX:-UsePerfData: the JVM behind mvn leaves no /tmp/hsperfdata_<user>/<pid> behind
    const env = { ...process.env, MAVEN_OPTS: `${process.env.MAVEN_OPTS ?? ''} -XX:-UsePerfData`.trim() };
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/**
 * Puts Apicurio Registry into the cache (once): `mvn dependency:copy` of the distribution into a
 * staging dir (with a throwaway local Maven repository, so nothing lands in ~/.m2), unpack, then
 * one rename into place. Concurrent callers serialise on a lock; later calls return at once.
 */
export async function installSchemaRegistry(opts: { log?: Log } = {}): Promise<Installation> {
  const log = opts.log ?? (() => {});
  const dir = schemaRegistryInstallDir();
  const runnerJar = join(dir, RUNNER_JAR);
  if (isSchemaRegistryInstalled()) return { dir, runnerJar, installedNow: false };

  const base = join(sluiceCacheDir(), 'schema-registry');
  await mkdir(base, { recursive: true });
  return withLock(join(base, '.install.lock'), log, async () => {
    if (isSchemaRegistryInstalled()) return { dir, runnerJar, installedNow: false };
    // leftovers of an interrupted install (we hold the lock, so nobody is using them)
    for (const name of await readdir(base)) {
      if (name.startsWith('.staging-')) await rm(join(base, name), { recursive: true, force: true });
    }
    await rm(dir, { recursive: true, force: true });

    const staging = await mkdtemp(join(base, '.staging-'));
    try {
      const mvn = process.env.SLUICE_MVN || 'mvn';
      log(`downloading ${APICURIO_ARTIFACT} with ${mvn}`);
      const started = Date.now();
      let result: Awaited<ReturnType<typeof run>>;
      try {
        result = await run(
          mvn,
          [
            '-B',
            '-q',
            '--strict-checksums',
            `-Dmaven.repo.local=${join(staging, 'm2')}`,
            `${MAVEN_DEPENDENCY_PLUGIN}:copy`,
            `-Dartifact=${APICURIO_ARTIFACT}`,
            `-DoutputDirectory=${join(staging, 'download')}`,
          ],
          staging,
        );
      } catch (err) {
        throw new Error(
          `installing the schema registry needs Maven ('${mvn}' could not be run: ${(err as Error).message}). ` +
            `Install it (Debian: apt-get install maven) or set SLUICE_MVN.`,
        );
      }
      if (result.code !== 0) {
        throw new Error(
          `mvn could not fetch ${APICURIO_ARTIFACT} (exit ${result.code}):\n${result.output.slice(-4000)}`,
        );
      }
      const archive = join(staging, 'download', `apicurio-registry-app-${APICURIO_VERSION}-all.tar.gz`);
      const sha256 = await sha256Of(archive);
      if (sha256 !== APICURIO_ARCHIVE_SHA256) {
        throw new Error(`${archive} has SHA-256 ${sha256}, expected ${APICURIO_ARCHIVE_SHA256}`);
      }
      const app = join(staging, 'app');
      await mkdir(app);
      const untar = await run('tar', ['-xzf', archive, '-C', app], staging);
      if (untar.code !== 0) throw new Error(`could not unpack ${archive}:\n${untar.output}`);
      if (!existsSync(join(app, RUNNER_JAR))) throw new Error(`${RUNNER_JAR} missing from ${APICURIO_ARTIFACT}`);
      await writeFile(
        join(app, MARKER),
        JSON.stringify({ artifact: APICURIO_ARTIFACT, installedAt: new Date().toISOString() }, null, 2),
      );
      await rename(app, dir);
      log(
        `installed Apicurio Registry ${APICURIO_VERSION} in ${dir} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
      );
      return { dir, runnerJar, installedNow: true };
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  });
}
