// The broker's logging configuration: log4j 1 (reload4j) for Kafka 3.x, log4j 2 for 4.x, with the
// same file, levels and line format; and reading that format back for error messages.

import { readFileSync } from 'node:fs';
import { isKafka4, type KafkaVersion } from './install.ts';

/** Loggers that are chatty at INFO on a busy broker. */
const QUIET_LOGGERS = [
  'kafka.request.logger',
  'kafka.network.RequestChannel$',
  'state.change.logger',
  'kafka.authorizer.logger',
  'org.apache.kafka.clients',
];

/** The broker's log config: a rolling `file` (20 MB × 3), INFO, the quiet loggers at WARN. */
export function brokerLogConfig(version: KafkaVersion, file: string): string {
  return isKafka4(version) ? brokerLog4j2(file) : brokerLog4j(file);
}

/** The storage tool's log config: WARN and above to stderr. */
export function toolsLogConfig(version: KafkaVersion): string {
  return isKafka4(version) ? TOOLS_LOG4J2 : TOOLS_LOG4J;
}

/** The JVM flag naming the logging config: log4j 1 (reload4j) for Kafka 3.x, log4j 2 for 4.x. */
export function logConfigFlag(version: KafkaVersion, file: string): string {
  return isKafka4(version) ? `-Dlog4j2.configurationFile=${fileUrl(file)}` : `-Dlog4j.configuration=${fileUrl(file)}`;
}

function brokerLog4j(file: string): string {
  return `log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.RollingFileAppender
log4j.appender.file.File=${file.replace(/\\/g, '/')}
log4j.appender.file.MaxFileSize=20MB
log4j.appender.file.MaxBackupIndex=2
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
${QUIET_LOGGERS.map((name) => `log4j.logger.${name}=WARN`).join('\n')}
`;
}

function brokerLog4j2(file: string): string {
  return `status = warn
appender.file.type = RollingFile
appender.file.name = file
appender.file.fileName = ${file.replace(/\\/g, '/')}
appender.file.filePattern = ${file.replace(/\\/g, '/')}.%i
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
appender.file.policies.type = Policies
appender.file.policies.size.type = SizeBasedTriggeringPolicy
appender.file.policies.size.size = 20MB
appender.file.strategy.type = DefaultRolloverStrategy
appender.file.strategy.max = 2
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
${QUIET_LOGGERS.map((name, i) => `logger.q${i}.name = ${name}\nlogger.q${i}.level = WARN`).join('\n')}
`;
}

const TOOLS_LOG4J = `log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
`;

const TOOLS_LOG4J2 = `status = warn
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.stderr.ref = stderr
`;

function fileUrl(path: string): string {
  return new URL(`file://${path.startsWith('/') ? '' : '/'}${path.replace(/\\/g, '/')}`).href;
}

/** The first ERROR/FATAL entries (with their stack trace heads) of a log in the format above. */
export function errorLines(file: string, max: number): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return '';
  }
  const out: string[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length && out.length < max; i++) {
    if (!/^\[[^\]]+\] (ERROR|FATAL) /.test(lines[i]!)) continue;
    out.push(lines[i]!);
    // A few lines of the stack trace that follows, if any.
    for (let j = i + 1; j < lines.length && j <= i + 3 && !lines[j]!.startsWith('['); j++) out.push(lines[j]!);
  }
  return out.join('\n');
}
