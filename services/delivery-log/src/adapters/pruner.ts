import type { Logger } from '@sluice/logging';
import type { DeliveryLogMetrics } from '../metrics.ts';
import type { LogStore } from './store.ts';

export interface PrunerOptions {
  store: LogStore;
  /** Read per run, so a config reload applies. */
  retentionMs: () => number;
  intervalMs: number;
  now: () => number;
  metrics: DeliveryLogMetrics;
  logger: Logger;
}

/** The retention job: every `intervalMs`, deletes what was received more than the retention ago. */
export class Pruner {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<number> | undefined;
  readonly #o: PrunerOptions;
  constructor(options: PrunerOptions) {
    this.#o = options;
  }

  /** One pruning run; returns the messages deleted. */
  async runOnce(): Promise<number> {
    this.#running ??= (async () => {
      try {
        const deleted = await this.#o.store.prune(this.#o.now() - this.#o.retentionMs());
        this.#o.metrics.pruned.inc(deleted);
        if (deleted > 0) this.#o.logger.info({ deleted }, 'pruned messages past retention');
        return deleted;
      } finally {
        this.#running = undefined;
      }
    })();
    return this.#running;
  }

  start(): void {
    this.#timer = setInterval(() => {
      this.runOnce().catch((err: unknown) =>
        this.#o.logger.error({ err }, 'pruning failed; trying again next interval'),
      );
    }, this.#o.intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running?.catch(() => {});
  }
}
