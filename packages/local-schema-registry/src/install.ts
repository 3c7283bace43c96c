import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { installOnce, isInstalled, runMaven, runToCompletion, sluiceCacheDir } from '@sluice/local-runtime';

/** Apicurio Registry release used. 3.0.x is the newest line whose build targets Java 17. */
export const APICURIO_VERSION = '3.0.9';
/** Maven coordinates of the runnable distribution (runner jar + lib/), fetched with `mvn`. */
export const APICURIO_ARTIFACT = `io.apicurio:apicurio-registry-app:${APICURIO_VERSION}:tar.gz:all`;
const RUNNER_JAR = `apicurio-registry-app-${APICURIO_VERSION}-runner.jar`;
/** SHA-256 of that archive, checked after download. */
const APICURIO_ARCHIVE_SHA256 = '2b28181501a20cbf6efcd77f9b7153908fc01f3d3a7c32024c0bd9e1b04c8a43';
/**
 * Maven's dependency plugin 2.8 on purpose (not local-runtime's MAVEN_DEPENDENCY_PLUGIN): 3.x reads the artifact's descriptor, which needs the parent POM
 * io.apicurio:apicurio-registry:3.0.9, and that POM was never published to Maven Central.
 */
const APICURIO_DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:2.8';

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
  return isInstalled(schemaRegistryInstallDir(), MARKER);
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Puts Apicurio Registry into the cache (once, `installOnce`): `mvn dependency:copy` of the
 * distribution with a throwaway local Maven repository (nothing lands in ~/.m2), a SHA-256 check,
 * and an unpack into the staging dir that is then renamed into place.
 */
export async function installSchemaRegistry(opts: { log?: Log } = {}): Promise<Installation> {
  const dir = schemaRegistryInstallDir();
  const runnerJar = join(dir, RUNNER_JAR);
  const { installedNow } = await installOnce({
    home: dir,
    what: `Apicurio Registry ${APICURIO_VERSION}`,
    marker: MARKER,
    ...(opts.log && { log: opts.log }),
    build: async ({ staging, scratch }) => {
      await runMaven(
        [
          '-B',
          '-q',
          '--strict-checksums',
          `-Dmaven.repo.local=${join(scratch, 'm2')}`,
          `${APICURIO_DEPENDENCY_PLUGIN}:copy`,
          `-Dartifact=${APICURIO_ARTIFACT}`,
          `-DoutputDirectory=${join(scratch, 'download')}`,
        ],
        { cwd: scratch, what: APICURIO_ARTIFACT },
      );
      const archive = join(scratch, 'download', `apicurio-registry-app-${APICURIO_VERSION}-all.tar.gz`);
      const sha256 = await sha256Of(archive);
      if (sha256 !== APICURIO_ARCHIVE_SHA256) {
        throw new Error(`${archive} has SHA-256 ${sha256}, expected ${APICURIO_ARCHIVE_SHA256}`);
      }
      await mkdir(staging, { recursive: true });
      const untar = await runToCompletion('tar', ['-xzf', archive, '-C', staging], { cwd: scratch });
      if (untar.code !== 0) throw new Error(`could not unpack ${archive}:\n${untar.output}`);
      if (!existsSync(join(staging, RUNNER_JAR))) throw new Error(`${RUNNER_JAR} missing from ${APICURIO_ARTIFACT}`);
      return { artifact: APICURIO_ARTIFACT };
    },
  });
  return { dir, runnerJar, installedNow };
}
