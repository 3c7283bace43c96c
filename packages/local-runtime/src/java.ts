import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The oldest Java the provisioned JVMs (Kafka 4.x, Apicurio Registry 3.0) run on. */
export const MIN_JAVA_VERSION = 17;

export interface FindJavaOptions {
  /** Who needs it, for the error message: `Apache Kafka`. */
  needs?: string;
  /** What else the user can do, appended to the error message: `or set KAFKA_BROKERS ...`. */
  otherwise?: string;
  /** Default `process.env`. */
  env?: NodeJS.ProcessEnv;
}

const checked = new Map<string, number>();

/**
 * The java binary to run: `$SLUICE_JAVA`, else `$JAVA_HOME/bin/java` (if it exists), else `java`
 * on PATH. Checks once per binary that it runs and is Java 17 or later; throws a message saying
 * how to fix it otherwise.
 */
export function findJava(options: FindJavaOptions = {}): string {
  const env = options.env ?? process.env;
  const fromJavaHome = env.JAVA_HOME ? join(env.JAVA_HOME, 'bin', 'java') : undefined;
  const java = env.SLUICE_JAVA || (fromJavaHome && existsSync(fromJavaHome) ? fromJavaHome : 'java');
  if (checked.has(java)) return java;
  const needs = `${options.needs ?? 'This'} needs Java ${MIN_JAVA_VERSION} or later`;
  const otherwise = options.otherwise ? `, ${options.otherwise}` : '';
  const probe = spawnSync(java, ['-version'], { encoding: 'utf8', env });
  if (probe.error) {
    throw new Error(
      `${needs}, but '${java}' could not be run (${probe.error.message}). Install a JRE (Debian: apt-get install ` +
        `openjdk-17-jre-headless), set JAVA_HOME or SLUICE_JAVA${otherwise}.`,
    );
  }
  const major = javaMajorVersion(`${probe.stderr}${probe.stdout}`);
  if (major === undefined || major < MIN_JAVA_VERSION) {
    throw new Error(
      `${needs}, but '${java} -version' says: ${`${probe.stderr}${probe.stdout}`.trim() || `exit ${probe.status}`}. ` +
        `Set JAVA_HOME or SLUICE_JAVA to a newer one${otherwise}.`,
    );
  }
  checked.set(java, major);
  return java;
}

/** The major version in `java -version` output: `version "17.0.9"` → 17, `version "1.8.0_312"` → 8. */
export function javaMajorVersion(versionOutput: string): number | undefined {
  const match = /version "(\d+)(?:\.(\d+))?/.exec(versionOutput);
  if (!match) return undefined;
  return match[1] === '1' ? Number(match[2]) : Number(match[1]);
}
