import type { ConsumedRecord } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import { INGEST_BATCH_MAX } from '../constants.ts';
import { readRecord, type LogEntry, type TopicRoles } from '../domain/records.ts';
import type { DeliveryLogMetrics } from '../metrics.ts';
import type { LogStore } from './store.ts';

interface Pending {
  entry: LogEntry;
  done: () => void;
  failed: (err: Error) => void;
}

export interface IngestOptions {
  store: LogStore;
  topics: TopicRoles;
  metrics: DeliveryLogMetrics;
  logger: Logger;
  /** Records older than this (epoch ms) are past retention: read, not kept. */
  keepAfter: () => number;
  /** Destination ids an event is routed to (the deliverer's routing over the config in force). */
  route: (event: Record<string, unknown>) => string[];
}

/**
 * Group commit: records handed in while a transaction runs are written together by the next one,
 * so the database sees one transaction per batch, not per record. A record's promise resolves
 * once its transaction committed (then its offset may be committed); a database failure rejects
 * every record of the batch, which ends the consumer (the records are read again after restart).
 * A record the log cannot read is counted and skipped: it never stops a partition.
 */
export class IngestBatcher {
  #queue: Pending[] = [];
  #writing: Promise<void> | undefined;
  readonly #options: IngestOptions;

  constructor(options: IngestOptions) {
    this.#options = options;
  }

  handle = (record: ConsumedRecord): Promise<void> => {
    const { metrics, logger } = this.#options;
    const read = readRecord(record, this.#options.topics);
    if (!read.ok) {
      metrics.skipped.inc({ topic: record.topic });
      logger.debug(
        { topic: record.topic, partition: record.partition, offset: record.offset, reason: read.reason },
        'record skipped',
      );
      return Promise.resolve();
    }
    if (entryTime(read.entry) < this.#options.keepAfter()) {
      metrics.skipped.inc({ topic: record.topic });
      return Promise.resolve();
    }
    if (read.entry.kind === 'event') read.entry.destinationIds = this.#options.route(read.entry.envelope);
    return new Promise<void>((done, failed) => {
      this.#queue.push({ entry: read.entry, done, failed });
      this.#writing ??= this.#drain();
    });
  };

  async #drain(): Promise<void> {
    // Let the records of the current fetch join the first batch.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, INGEST_BATCH_MAX);
      const started = performance.now();
      try {
        await this.#options.store.ingest(batch.map((p) => p.entry));
        this.#options.metrics.ingested.inc(batch.length);
        this.#options.metrics.batchSeconds.observe((performance.now() - started) / 1_000);
        for (const p of batch) p.done();
      } catch (err) {
        for (const p of batch) p.failed(err as Error);
      }
    }
    this.#writing = undefined;
  }
}

function entryTime(entry: LogEntry): number {
  return entry.kind === 'event' ? entry.receivedAt : entry.at;
}
