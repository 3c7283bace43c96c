import { DEBUG_NAMESPACE } from './constants.ts';

/** Where log lines go. Default: stderr. */
export type LogSink = (line: string) => void;

export const stderrSink: LogSink = (line) => {
  process.stderr.write(`${line}\n`);
};

/**
 * Whether a `DEBUG` value turns the client's logging on, following the `debug` package's
 * conventions: a comma or space separated list containing `analytics`, `analytics*` or `*`.
 */
export function debugEnabled(value: string | undefined): boolean {
  if (!value) return false;
  return value
    .split(/[\s,]+/)
    .some(
      (name) =>
        name === '*' || name === DEBUG_NAMESPACE || name === `${DEBUG_NAMESPACE}*` || name === `${DEBUG_NAMESPACE}:*`,
    );
}

/** A logger that writes `analytics <ISO time> <message>` lines when enabled, and nothing otherwise. */
export function createDebugLog(enabled: boolean, sink: LogSink, now: () => number): (message: string) => void {
  if (!enabled) return () => {};
  return (message) => {
    try {
      sink(`${DEBUG_NAMESPACE} ${new Date(now()).toISOString()} ${message}`);
    } catch {
      // A failing log sink must never stop delivery.
    }
  };
}
