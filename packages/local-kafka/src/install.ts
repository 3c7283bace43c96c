// Provisioning of the Apache Kafka broker jars from Maven Central into a per-user cache.
//
// Layout:  <cache>/kafka-3.9.1/libs/*.jar  +  <cache>/kafka-3.9.1/.installed (marker)
// The directory is built in a sibling temp dir and renamed into place, so it either exists
// complete (with its marker) or not at all. A lock file keeps two processes from downloading
// at the same time; correctness does not depend on it (the rename is the commit point).

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir, hostname, tmpdir } from 'node:os';
import { join } from 'node:path';

export const KAFKA_VERSION = '3.9.1';
export const SCALA_VERSION = '2.13';
const SLF4J_VERSION = '1.7.36';
/** Same reload4j version as the official Kafka 3.9.1 binary distribution. */
const RELOAD4J_VERSION = '1.2.25';
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';
const MARKER = '.installed';
/** A lock older than this whose holder we cannot see is considered abandoned. */
const STALE_LOCK_MS = 15 * 60_000;

export interface KafkaInstallation {
  version: string;
  /** `<cache>/kafka-3.9.1` */
  home: string;
  /** `<cache>/kafka-3.9.1/libs` */
  libs: string;
  /** Java class path: `<libs>/*` */
  classpath: string;
}

export interface InstallOptions {
  /** Progress messages (default: silent). */
  log?: (line: string) => void;
}

/** `$SLUICE_CACHE_DIR`, else `$XDG_CACHE_HOME/sluice`, else `~/.cache/sluice`. */
export function sluiceCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SLUICE_CACHE_DIR) return env.SLUICE_CACHE_DIR;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, 'sluice');
  return join(homedir(), '.cache', 'sluice');
}

function installation(cacheDir: string): KafkaInstallation {
  const home = join(cacheDir, `kafka-${KAFKA_VERSION}`);
  const libs = join(home, 'libs');
  return { version: KAFKA_VERSION, home, libs, classpath: join(libs, '*') };
}

/** The installation if it is complete in the cache, else undefined. Never downloads. */
export function findKafkaInstallation(cacheDir: string = sluiceCacheDir()): KafkaInstallation | undefined {
  const inst = installation(cacheDir);
  return existsSync(join(inst.home, MARKER)) ? inst : undefined;
}

/**
 * Makes sure Kafka's jars are in the cache, fetching them with Maven if needed
 * (works with an empty ~/.m2; needs `mvn` on PATH and access to Maven Central or a mirror
 * configured in the user's Maven settings).
 */
export async function ensureKafkaInstalled(opts: InstallOptions = {}): Promise<KafkaInstallation> {
  const cacheDir = sluiceCacheDir();
  const found = findKafkaInstallation(cacheDir);
  if (found) return found;
  await mkdir(cacheDir, { recursive: true });
  const release = await acquireLock(join(cacheDir, `kafka-${KAFKA_VERSION}.lock`), opts.log);
  try {
    const again = findKafkaInstallation(cacheDir);
    if (again) return again;
    return await install(cacheDir, opts.log ?? (() => {}));
  } finally {
    await release();
  }
}

async function install(cacheDir: string, log: (line: string) => void): Promise<KafkaInstallation> {
  const inst = installation(cacheDir);
  const started = Date.now();
  log(
    `local-kafka: fetching Apache Kafka ${KAFKA_VERSION} (kafka_${SCALA_VERSION}) from Maven Central into ${inst.home} ...`,
  );
  // We hold the lock, so staging dirs of earlier attempts are leftovers of killed processes.
  for (const entry of await readdir(cacheDir)) {
    if (entry.startsWith(`.kafka-${KAFKA_VERSION}.tmp-`))
      await rm(join(cacheDir, entry), { recursive: true, force: true });
  }
  // Staging dir next to the final one (same file system, so rename is atomic).
  const staging = await mkdtemp(join(cacheDir, `.kafka-${KAFKA_VERSION}.tmp-`));
  // The throwaway pom lives outside the cache.
  const work = await mkdtemp(join(tmpdir(), 'sluice-kafka-pom-'));
  try {
    await writeFile(join(work, 'pom.xml'), pom());
    const libs = join(staging, 'libs');
    await runMaven(work, [
      '-B',
      '-q',
      '-f',
      join(work, 'pom.xml'),
      `${DEPENDENCY_PLUGIN}:copy-dependencies`,
      `-DoutputDirectory=${libs}`,
      '-DincludeScope=runtime',
    ]);
    const jars = (await readdir(libs)).filter((f) => f.endsWith('.jar')).sort();
    for (const required of [
      `kafka_${SCALA_VERSION}-${KAFKA_VERSION}.jar`,
      `kafka-clients-${KAFKA_VERSION}.jar`,
      `reload4j-${RELOAD4J_VERSION}.jar`,
    ]) {
      if (!jars.includes(required))
        throw new Error(`local-kafka: Maven finished but ${required} is missing from ${libs}`);
    }
    await writeFile(
      join(staging, MARKER),
      JSON.stringify(
        { kafka: KAFKA_VERSION, scala: SCALA_VERSION, installedAt: new Date().toISOString(), jars },
        null,
        2,
      ) + '\n',
    );
    await chmod(staging, 0o755);
    // A leftover directory without a marker is an interrupted older attempt: remove it.
    if (existsSync(inst.home) && !existsSync(join(inst.home, MARKER)))
      await rm(inst.home, { recursive: true, force: true });
    try {
      await rename(staging, inst.home);
    } catch (err) {
      // Someone else (without the lock, e.g. a lock judged stale) finished first: fine.
      if (!findKafkaInstallation(cacheDir)) throw err;
    }
    log(`local-kafka: installed ${jars.length} jars in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return inst;
  } finally {
    await rm(staging, { recursive: true, force: true });
    await rm(work, { recursive: true, force: true });
  }
}

function pom(): string {
  const dep = (g: string, a: string, v: string) =>
    `    <dependency><groupId>${g}</groupId><artifactId>${a}</artifactId><version>${v}</version></dependency>`;
  return `<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by @sluice/local-kafka to fetch the broker's runtime class path. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.sluice</groupId>
  <artifactId>local-kafka-fetch</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
${dep('org.apache.kafka', `kafka_${SCALA_VERSION}`, KAFKA_VERSION)}
${dep('org.slf4j', 'slf4j-reload4j', SLF4J_VERSION)}
${dep('ch.qos.reload4j', 'reload4j', RELOAD4J_VERSION)}
  </dependencies>
</project>
`;
}

function runMaven(cwd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const child = spawn('mvn', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const collect = (b: Buffer) => {
      output = (output + b.toString()).slice(-20_000);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', (err: NodeJS.ErrnoException) => {
      reject(
        err.code === 'ENOENT'
          ? new Error(
              `local-kafka: Maven ('mvn') is not on PATH. It is needed once, to fetch Apache Kafka ${KAFKA_VERSION} ` +
                `from Maven Central (install Maven 3.6+ and Java 17), or set KAFKA_BROKERS to use an existing broker.`,
            )
          : err,
      );
    });
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          new Error(`local-kafka: 'mvn ${args.join(' ')}' failed (${signal ?? `exit ${code}`}):\n${output.trim()}`),
        );
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Lock file: created with O_EXCL, holds "pid host time". Waiters poll; a lock whose holder
// process is gone (same host) or that is very old is broken.

async function acquireLock(path: string, log?: (line: string) => void): Promise<() => Promise<void>> {
  const token = `${process.pid} ${hostname()} ${Date.now()} ${randomBytes(4).toString('hex')}`;
  let announced = false;
  for (;;) {
    try {
      const fh = await open(path, 'wx');
      await fh.writeFile(token);
      await fh.close();
      return async () => {
        // Only remove the lock if it is still ours.
        const content = await readFile(path, 'utf8').catch(() => '');
        if (content === token) await rm(path, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (await isStale(path)) {
      await rm(path, { force: true });
      continue;
    }
    if (!announced) {
      log?.(`local-kafka: another process is installing Kafka (lock ${path}); waiting ...`);
      announced = true;
    }
    await sleep(500);
    // The other process may have finished meanwhile; the caller re-checks the marker.
  }
}

async function isStale(path: string): Promise<boolean> {
  const [content, st] = await Promise.all([readFile(path, 'utf8').catch(() => ''), stat(path).catch(() => undefined)]);
  if (!st) return false; // vanished: just retry
  const [pidText, host] = content.split(' ');
  const pid = Number(pidText);
  if (host === hostname() && Number.isInteger(pid) && pid > 0 && !processExists(pid)) return true;
  // Empty (holder died between create and write) or unknown holder: judge by age.
  const age = Date.now() - st.mtimeMs;
  return content === '' ? age > 10_000 : age > STALE_LOCK_MS;
}

export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
