// Provisioning of the Apache Kafka broker jars from Maven Central into the per-user cache
// (`installOnce` of @sluice/local-runtime: a lock, a staging dir renamed into place, a marker).
//
// Layout:  <cache>/kafka-<version>/libs/*.jar  +  <cache>/kafka-<version>/.installed (marker)

import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isInstalled, installOnce, MAVEN_DEPENDENCY_PLUGIN, runMaven, sluiceCacheDir } from '@sluice/local-runtime';

/** The Apache Kafka versions the local broker can run (docs/local-kafka.md). */
export const SUPPORTED_KAFKA_VERSIONS = ['3.9.1', '4.1.1'] as const;
export type KafkaVersion = (typeof SUPPORTED_KAFKA_VERSIONS)[number];
/** The version started when neither the caller nor `SLUICE_KAFKA_VERSION` names one. */
export const KAFKA_VERSION: KafkaVersion = '4.1.1';
export const SCALA_VERSION = '2.13';
const SLF4J_VERSION = '1.7.36';
/** Same reload4j version as the official Kafka 3.9.1 binary distribution (Kafka 3.x logs through log4j 1). */
const RELOAD4J_VERSION = '1.2.25';
/** Same log4j 2 version as the official Kafka 4.1.1 binary distribution (Kafka 4.x logs through log4j 2). */
const LOG4J2_VERSION = '2.24.3';

export interface KafkaInstallation {
  version: KafkaVersion;
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
  /** Kafka version; default `SLUICE_KAFKA_VERSION`, else `KAFKA_VERSION`. */
  version?: KafkaVersion;
}

/** `SLUICE_KAFKA_VERSION` if set (one of `SUPPORTED_KAFKA_VERSIONS`), else `KAFKA_VERSION`. */
export function kafkaVersionFromEnv(env: NodeJS.ProcessEnv = process.env): KafkaVersion {
  const wanted = env.SLUICE_KAFKA_VERSION;
  if (wanted === undefined || wanted === '') return KAFKA_VERSION;
  if (!(SUPPORTED_KAFKA_VERSIONS as readonly string[]).includes(wanted)) {
    throw new Error(`local-kafka: SLUICE_KAFKA_VERSION=${wanted} is not one of ${SUPPORTED_KAFKA_VERSIONS.join(', ')}`);
  }
  return wanted as KafkaVersion;
}

/** Kafka 4 dropped ZooKeeper and log4j 1: its broker logs through log4j 2. */
export function isKafka4(version: KafkaVersion): boolean {
  return version.startsWith('4.');
}

function installation(cacheDir: string, version: KafkaVersion): KafkaInstallation {
  const home = join(cacheDir, `kafka-${version}`);
  const libs = join(home, 'libs');
  return { version, home, libs, classpath: join(libs, '*') };
}

/** The installation if it is complete in the cache, else undefined. Never downloads. */
export function findKafkaInstallation(
  cacheDir: string = sluiceCacheDir(),
  version: KafkaVersion = kafkaVersionFromEnv(),
): KafkaInstallation | undefined {
  const inst = installation(cacheDir, version);
  return isInstalled(inst.home) ? inst : undefined;
}

/**
 * Makes sure Kafka's jars are in the cache, fetching them with Maven if needed
 * (works with an empty ~/.m2; needs `mvn` on PATH and access to Maven Central or a mirror
 * configured in the user's Maven settings).
 */
export async function ensureKafkaInstalled(opts: InstallOptions = {}): Promise<KafkaInstallation> {
  const version = opts.version ?? kafkaVersionFromEnv();
  const inst = installation(sluiceCacheDir(), version);
  const what = `Apache Kafka ${version} (kafka_${SCALA_VERSION})`;
  await installOnce({
    home: inst.home,
    what,
    log: (line) => opts.log?.(`local-kafka: ${line}`),
    build: async ({ staging, scratch }) => {
      await writeFile(join(scratch, 'pom.xml'), pom(version));
      const libs = join(staging, 'libs');
      await runMaven(
        [
          '-B',
          '-q',
          '-f',
          join(scratch, 'pom.xml'),
          `${MAVEN_DEPENDENCY_PLUGIN}:copy-dependencies`,
          `-DoutputDirectory=${libs}`,
          '-DincludeScope=runtime',
        ],
        { cwd: scratch, what },
      );
      const jars = (await readdir(libs)).filter((f) => f.endsWith('.jar')).sort();
      const logging = isKafka4(version) ? `log4j-core-${LOG4J2_VERSION}.jar` : `reload4j-${RELOAD4J_VERSION}.jar`;
      for (const required of [`kafka_${SCALA_VERSION}-${version}.jar`, `kafka-clients-${version}.jar`, logging]) {
        if (!jars.includes(required))
          throw new Error(`local-kafka: Maven finished but ${required} is missing from ${libs}`);
      }
      return { kafka: version, scala: SCALA_VERSION, jars };
    },
  });
  return inst;
}

function pom(version: KafkaVersion): string {
  const dep = (g: string, a: string, v: string) =>
    `    <dependency><groupId>${g}</groupId><artifactId>${a}</artifactId><version>${v}</version></dependency>`;
  const logging = isKafka4(version)
    ? [
        dep('org.apache.logging.log4j', 'log4j-slf4j-impl', LOG4J2_VERSION),
        dep('org.apache.logging.log4j', 'log4j-core', LOG4J2_VERSION),
        dep('org.apache.logging.log4j', 'log4j-api', LOG4J2_VERSION),
      ]
    : [dep('org.slf4j', 'slf4j-reload4j', SLF4J_VERSION), dep('ch.qos.reload4j', 'reload4j', RELOAD4J_VERSION)];
  return `<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by @sluice/local-kafka to fetch the broker's runtime class path. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.sluice</groupId>
  <artifactId>local-kafka-fetch</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
${dep('org.apache.kafka', `kafka_${SCALA_VERSION}`, version)}
${logging.join('\n')}
  </dependencies>
</project>
`;
}
