import type { Logger } from '@sluice/logging';

/** A consumer as a shutdown sees it. */
export interface Drainable {
  /** Stops taking new records; in-flight handlers keep running. */
  stopIntake(): void;
  /** Waits for in-flight handlers, up to `timeoutMs`; resolves false if some are still running. */
  drain(timeoutMs: number): Promise<boolean>;
  /** Commits what is finished and leaves the group. */
  close(): Promise<void>;
}

/** Time a consumer's in-flight work gets at shutdown before it is handed back uncommitted. */
const DEFAULT_DRAIN_TIMEOUT_MS = 20_000;

/**
 * How consumers that have stopped taking records end (docs/reference/observability.md,
 * "Shutdown"): their in-flight work finishes, all of them at once, or after `drainTimeoutMs` is
 * handed back uncommitted; then each commits and leaves its group. A close that fails is logged
 * and does not keep the others from closing.
 */
export async function drainAndClose(
  consumers: readonly Drainable[],
  logger: Logger,
  drainTimeoutMs = DEFAULT_DRAIN_TIMEOUT_MS,
): Promise<void> {
  const drained = await Promise.all(consumers.map((c) => c.drain(drainTimeoutMs)));
  if (drained.some((d) => !d)) logger.warn('in-flight work did not finish in time; it is handed back uncommitted');
  await Promise.all(consumers.map((c) => c.close().catch((err) => logger.warn({ err }, 'consumer close failed'))));
}
