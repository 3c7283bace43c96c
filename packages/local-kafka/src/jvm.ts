// The broker's JVMs: the broker itself (under the local-runtime watchdog) and the short-lived
// storage tool that formats its data dir.

import { join } from 'node:path';
import { findJava, runToCompletion, supervise, type Supervised } from '@sluice/local-runtime';
import type { KafkaInstallation } from './install.ts';
import { logConfigFlag } from './log4j.ts';
import { scramUsers } from './server-properties.ts';

/** SIGTERM (controlled shutdown) gets this long before SIGKILL. */
const STOP_GRACE_MS = 15_000;
const BROKER_JVM_OPTIONS = [
  '-Xms256m',
  '-Xmx1g',
  '-XX:+UseG1GC',
  '-XX:MaxGCPauseMillis=20',
  '-XX:InitiatingHeapOccupancyPercent=35',
  '-XX:+ExplicitGCInvokesConcurrent',
  '-XX:+ExitOnOutOfMemoryError',
  '-Djava.awt.headless=true',
];
/** The storage tool is a short-lived command: favour start-up speed. */
const TOOL_JVM_OPTIONS = ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Djava.awt.headless=true'];

/** Where a broker keeps its files: `<dir>/config/*`, `<dir>/logs/*`. */
export interface BrokerFiles {
  dir: string;
  configFile: string;
  /** The JVM's own stdout/stderr. */
  jvmOut: string;
}

/** The java that runs the broker (`findJava`: `SLUICE_JAVA`, `JAVA_HOME`, PATH; Java 17+). */
export function kafkaJava(): string {
  return findJava({ needs: 'Apache Kafka', otherwise: 'or set KAFKA_BROKERS to use an existing broker' });
}

/** Starts the broker JVM; it is removed with its dir by the watchdog if this process dies. */
export function startBrokerJvm(install: KafkaInstallation, files: BrokerFiles): Promise<Supervised> {
  return supervise(
    kafkaJava(),
    [
      ...BROKER_JVM_OPTIONS,
      logConfigFlag(install.version, join(files.dir, 'config', 'log4j.properties')),
      `-Dkafka.logs.dir=${join(files.dir, 'logs')}`,
      '-cp',
      install.classpath,
      'kafka.Kafka',
      files.configFile,
    ],
    { name: 'local-kafka', logFile: files.jvmOut, cleanupDir: files.dir, stopGraceMs: STOP_GRACE_MS },
  );
}

/** `kafka-storage format` of the data dir named in the config, with the SCRAM user of a secured broker. */
export async function formatStorage(
  install: KafkaInstallation,
  files: BrokerFiles,
  clusterId: string,
  user: { username: string; password: string } | undefined,
): Promise<void> {
  const { code, output } = await runToCompletion(kafkaJava(), [
    ...TOOL_JVM_OPTIONS,
    logConfigFlag(install.version, join(files.dir, 'config', 'tools-log4j.properties')),
    '-cp',
    install.classpath,
    'kafka.tools.StorageTool',
    'format',
    '-t',
    clusterId,
    '-c',
    files.configFile,
    ...(user ? scramUsers(user) : []),
  ]);
  if (code !== 0) throw new Error(`local-kafka: formatting storage failed (exit ${code}):\n${output.trim()}`);
}
