import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { REDACT_PATHS } from './redaction.ts';

export type { Logger } from 'pino';

export interface LoggerSettings {
  /** Service name, written as `service` on every line. */
  name: string;
  /** pino level, default `info`. */
  level?: string;
  /** Destination stream (tests capture lines); default stdout. */
  destination?: NodeJS.WritableStream;
}

/** JSON logger with secrets redacted (docs/reference/observability.md). */
export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level: settings.level ?? 'info',
    base: { service: settings.name },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return settings.destination ? pino(options, settings.destination as DestinationStream) : pino(options);
}
