import type { Logger } from '@sluice/logging';

/** A consumer as the shutdown sequence sees it. */
export interface Drainable {
  stopIntake(): void;
  drain(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface ShutdownParts {
  logger: Logger;
  /** HTTP servers and other intake that must stop first. */
  stopIntake?: () => Promise<void>;
  consumers?: Drainable[];
  /** Flushed and disconnected after consumers finished their in-flight work. */
  producers?: { disconnect(): Promise<void> }[];
  /** Anything else (admin clients, config watchers, agents), closed last. */
  others?: (() => Promise<void> | void)[];
  /** Time allowed for in-flight work before it is handed back uncommitted. Default 20 s. */
  drainTimeoutMs?: number;
}

/**
 * The one shutdown order of every Sluice service (docs/reference/observability.md): stop intake, let in-flight work
 * finish (or hand it back uncommitted), commit, flush producers, then disconnect the rest.
 */
export async function shutdownInOrder(parts: ShutdownParts): Promise<void> {
  const { logger } = parts;
  const consumers = parts.consumers ?? [];
  consumers.forEach((c) => c.stopIntake());
  await parts.stopIntake?.();
  const drained = await Promise.all(consumers.map((c) => c.drain(parts.drainTimeoutMs ?? 20_000)));
  if (drained.some((d) => !d)) logger.warn('in-flight work did not finish in time; it is handed back uncommitted');
  // Consumers commit on close; producers flush after, because handlers may still have been producing.
  await Promise.all(consumers.map((c) => c.close().catch((err) => logger.warn({ err }, 'consumer close failed'))));
  await Promise.all(
    (parts.producers ?? []).map((p) => p.disconnect().catch((err) => logger.warn({ err }, 'producer close failed'))),
  );
  for (const close of parts.others ?? [])
    await Promise.resolve(close()).catch((err) => logger.warn({ err }, 'close failed'));
}
