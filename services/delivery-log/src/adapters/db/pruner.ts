import type { Logger } from '@sluice/logging';
import { EVICT_FRACTION, EVICT_HIGH_WATER, PRUNE_PAUSE_RATIO, SIZE_CHECK_INTERVAL_MS } from '../../constants.ts';
import type { DeliveryLogMetrics } from '../../metrics.ts';
import type { Sql } from './database.ts';
import { logSize, messageCount, oldestCut, pruneBefore, reclaim } from './retention.ts';
import { iso } from './sql-values.ts';

export interface PrunerOptions {
  sql: Sql;
  /** Read per run, so a config reload applies. */
  retentionMs: () => number;
  intervalMs: number;
  /** Size cap of the log's tables in bytes, read per check; undefined or 0: no cap. */
  maxSizeBytes: () => number | undefined;
  /** How often the size is checked; default `SIZE_CHECK_INTERVAL_MS`. */
  sizeCheckIntervalMs?: number;
  now: () => number;
  metrics: DeliveryLogMetrics;
  logger: Logger;
}

/**
 * Retention by age and by size (docs/delivery-log.md, "Retention"). Every `intervalMs` it deletes
 * what was received more than the retention ago; every `sizeCheckIntervalMs` it measures the
 * tables against the cap. Both delete in small batches; one job runs at a time.
 *
 * Deleted rows free space inside the tables' files but do not shrink them (the freed space is
 * taken by new rows first), so past the high-water mark the files' size no longer tells how full
 * they are. The cap is then kept as a number of messages: the bytes per message are learnt when
 * the tables first pass `EVICT_HIGH_WATER` of the cap, the messages that fit under that mark
 * follow, and whenever there are more, the oldest are evicted down to `1 - EVICT_FRACTION` of it.
 */
export class Pruner {
  #timers = new Map<string, NodeJS.Timeout>();
  #queue: Promise<unknown> = Promise.resolve();
  /** Bytes per message, learnt once the tables pass the high-water mark (see `checkSize`). */
  #perMessage: number | undefined;
  /** Size at the last check. */
  #lastSize = 0;
  readonly #o: PrunerOptions;
  constructor(options: PrunerOptions) {
    this.#o = options;
  }

  /** One pruning run by age; returns the messages deleted. */
  runOnce(): Promise<number> {
    return this.#exclusive(async () => {
      const { sql, metrics, logger } = this.#o;
      const deleted = await pruneBefore(sql, this.#o.now() - this.#o.retentionMs(), { pauseRatio: PRUNE_PAUSE_RATIO });
      metrics.pruned.inc(deleted);
      if (deleted > 0) {
        if (sql.kind === 'embedded') await reclaim(sql);
        logger.info({ deleted }, 'pruned messages past retention');
      }
      return deleted;
    });
  }

  /** One size check; returns the messages evicted (0 under the cap). */
  checkSize(): Promise<number> {
    return this.#exclusive(async () => {
      const { sql, metrics, logger } = this.#o;
      const cap = this.#o.maxSizeBytes();
      const size = await logSize(sql);
      metrics.sizeBytes.set(size);
      if (!cap || size <= cap * EVICT_HIGH_WATER) {
        this.#perMessage = undefined;
        return 0;
      }
      const total = await messageCount(sql);
      if (total === 0) return 0;
      // Learnt when the tables first pass the high-water mark (no freed space inside them yet),
      // and again whenever they grow past the cap itself (the estimate was too small).
      if (this.#perMessage === undefined || (size > cap && size > this.#lastSize)) this.#perMessage = size / total;
      this.#lastSize = size;
      const target = Math.floor((cap * EVICT_HIGH_WATER) / this.#perMessage);
      if (total <= target) return 0;
      const cut = await oldestCut(sql, total - Math.floor(target * (1 - EVICT_FRACTION)), total);
      const evicted = await pruneBefore(sql, cut);
      // At once on both databases: the next rows must go into the freed space, not grow the files
      // (PostgreSQL's autovacuum would come later).
      await reclaim(sql);
      metrics.evicted.inc(evicted);
      logger.warn(
        { sizeBytes: size, maxSizeBytes: cap, messages: total, evicted, keptFrom: iso(cut) },
        'delivery log over its size cap: evicted the oldest messages',
      );
      return evicted;
    });
  }

  start(): void {
    // Each job runs `ms` after its previous run ended: a slow run is never queued up behind.
    const every = (key: string, ms: number, job: () => Promise<number>) => {
      const timer = setTimeout(async () => {
        try {
          await job();
        } catch (err) {
          this.#o.logger.error({ err }, `${key} failed; trying again next interval`);
        }
        if (this.#timers.has(key)) every(key, ms, job);
      }, ms);
      timer.unref();
      this.#timers.set(key, timer);
    };
    every('pruning', this.#o.intervalMs, () => this.runOnce());
    every('size check', this.#o.sizeCheckIntervalMs ?? SIZE_CHECK_INTERVAL_MS, () => this.checkSize());
  }

  async stop(): Promise<void> {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    await this.#queue.catch(() => {});
  }

  #exclusive<T>(job: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(job, job);
    this.#queue = run.catch(() => {});
    return run;
  }
}
