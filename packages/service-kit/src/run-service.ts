import type { Registry } from 'prom-client';
import { logProcessWarnings, type Logger } from '@sluice/logging';
import { StartupProbe } from './startup-probe.ts';

/** What every service factory returns (docs/CONVENTIONS.md). */
export interface RunningService {
  /** Graceful stop: stop intake, finish or hand back in-flight work, commit, flush. */
  close(): Promise<void>;
  /** Resolves (with the cause) if the service hits an unrecoverable error, e.g. a consumer crash. */
  fatal?: Promise<Error>;
}

/**
 * Something a service waits for before it starts (the brokers accepting its credentials). While
 * it does not hold, and then until the service's own server takes the port over, the service's
 * port answers `/healthz`, `/metrics` and `/readyz` (503, `check` false), and nothing else
 * (`StartupProbe`).
 */
export interface StartCondition {
  /** The `/readyz` check that is false while waiting. */
  check: string;
  /** The service's port (and host, default `0.0.0.0`). */
  port: number;
  host?: string;
  registry: Registry;
  /**
   * Resolves once the condition holds, and may take as long as it needs; rejects when `signal`
   * aborts. Calls `waiting()` when it does not hold at once: from then on the port answers.
   */
  until(signal: AbortSignal, waiting: () => Promise<void>): Promise<void>;
}

export interface RunServiceOptions {
  name: string;
  logger: Logger;
  /** Starts the service; with `waitFor`, `probe` answers on its port until the service releases it. */
  start: (probe?: StartupProbe) => Promise<RunningService>;
  /** Waited for before `start` (`waitForKafka`); SIGTERM/SIGINT meanwhile abort it and the process exits 0. */
  waitFor?: StartCondition;
  /** Hard limit on graceful shutdown before the process exits anyway (default 25 s). */
  shutdownTimeoutMs?: number;
  /** Injected for tests; default `process.exit`. */
  exit?: (code: number) => void;
}

/**
 * Runs a service as a process: starts it, and on SIGTERM/SIGINT closes it and exits 0; on a fatal
 * error (or a close that exceeds the hard timeout) exits 1, so an orchestrator restarts it rather
 * than leaving a process that looks healthy but does nothing.
 */
export async function runService(options: RunServiceOptions): Promise<void> {
  const { logger, name } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const timeoutMs = options.shutdownTimeoutMs ?? 25_000;
  logProcessWarnings(logger);
  let service: RunningService;
  const probe = options.waitFor && new StartupProbe(options.waitFor);
  if (options.waitFor && probe) {
    const abort = new AbortController();
    const onSignal = () => abort.abort(new Error('stopped before it started'));
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    try {
      await options.waitFor.until(abort.signal, () => probe.open());
      // The port answers through the rest of start-up too (a start can wait out Kafka for minutes).
      await probe.open();
    } catch (err) {
      await probe.close();
      if (abort.signal.aborted) {
        logger.info(`${name} stopped before it started`);
        exit(0);
      } else {
        logger.fatal({ err }, `${name} failed to start`);
        exit(1);
      }
      return;
    } finally {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    }
  }
  try {
    service = await options.start(probe);
  } catch (err) {
    await probe?.close();
    logger.fatal({ err }, `${name} failed to start`);
    exit(1);
    return;
  }
  await probe?.close();
  logger.info(`${name} started`);
  let closing = false;
  const shutdown = async (reason: string, code: number) => {
    if (closing) return;
    closing = true;
    logger.info({ reason }, `${name} shutting down`);
    const timer = setTimeout(() => {
      logger.error({ timeoutMs }, `${name} did not stop in time; exiting`);
      exit(1);
    }, timeoutMs);
    timer.unref();
    try {
      await service.close();
      logger.info(`${name} stopped`);
      exit(code);
    } catch (err) {
      logger.error({ err }, `${name} failed to stop cleanly`);
      exit(1);
    } finally {
      clearTimeout(timer);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM', 0));
  process.once('SIGINT', () => void shutdown('SIGINT', 0));
  service.fatal?.then((err) => {
    logger.fatal({ err }, `${name} hit an unrecoverable error`);
    void shutdown('fatal', 1);
  });
}
