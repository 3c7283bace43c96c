import { runToCompletion } from './run.ts';

/** The dependency plugin the installs run (`copy`, `copy-dependencies`). */
export const MAVEN_DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';

/**
 * Runs Maven (`$SLUICE_MVN`, else `mvn` on PATH) in `cwd`, to fetch `what` from Maven Central or
 * a mirror in the user's Maven settings. Throws with Maven's output when it fails.
 */
export async function runMaven(args: string[], options: { cwd: string; what: string }): Promise<void> {
  const mvn = process.env.SLUICE_MVN || 'mvn';
  // -XX:-UsePerfData: the JVM behind mvn leaves no /tmp/hsperfdata_<user>/<pid> behind.
  const env = { ...process.env, MAVEN_OPTS: `${process.env.MAVEN_OPTS ?? ''} -XX:-UsePerfData`.trim() };
  let result: Awaited<ReturnType<typeof runToCompletion>>;
  try {
    result = await runToCompletion(mvn, args, { cwd: options.cwd, env });
  } catch (err) {
    throw new Error(
      `Maven ('${mvn}') could not be run (${(err as Error).message}). It is needed once, to fetch ${options.what} ` +
        `from Maven Central: install Maven 3.6+ (Debian: apt-get install maven) or set SLUICE_MVN.`,
    );
  }
  if (result.code !== 0) {
    throw new Error(
      `'${mvn} ${args.join(' ')}' failed (${result.signal ?? `exit ${result.code}`}):\n${result.output.trim()}`,
    );
  }
}
