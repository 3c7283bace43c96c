import { type EnvelopeCodec, isConfluentFramed, SchemaRegistryUnavailableError, unframeConfluent } from '@sluice/codec';
import type { ConsumedRecord } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import { INGEST_BATCH_MAX, INGEST_LANES } from '../../constants.ts';
import { laneOf, type Read, readRecord, type LogEntry, type ReadEntry, type TopicRoles } from '../../domain/records.ts';
import type { DeliveryLogMetrics } from '../../metrics.ts';
import type { ReplayLog } from '../db/replay-log.ts';
import type { LogStore } from '../db/store.ts';
import type { IngestReport } from '../../domain/ingest-report.ts';

interface Pending {
  entry: ReadEntry;
  done: () => void;
  failed: (err: Error) => void;
}

export interface IngestOptions {
  store: LogStore;
  /** Keeps where each dead letter is and when it was replayed (the replays' index). */
  replayLog: ReplayLog;
  topics: TopicRoles;
  metrics: DeliveryLogMetrics;
  logger: Logger;
  /** Records older than this (epoch ms) are past retention: read, not kept. */
  keepAfter: () => number;
  /** Destination ids an event is routed to (the deliverer's routing over the config in force). */
  route: (event: Record<string, unknown>) => string[];
  /** Transactions in flight at once; default `INGEST_LANES`. */
  lanes?: number;
  /**
   * The pipeline's codec for `sluice.events` (`createEnvelopeCodec`): a Confluent-framed event is
   * read through it. Without one, a framed record is skipped.
   */
  codec?: EnvelopeCodec;
}

interface Lane {
  queue: Pending[];
  writing: Promise<void> | undefined;
}

/**
 * Group commit: records handed in while a transaction runs are written together by the next one,
 * so the database sees one transaction per batch, not per record. The messages are shared out
 * over a few lanes by message id (`laneOf`); each lane runs one transaction at a time, so the
 * lanes' transactions run side by side without ever touching the same message, and every message's
 * records are written in the order they were read. A record's promise resolves once its
 * transaction committed (then its offset may be committed); a database failure rejects every
 * record of the batch, which ends the consumer (the records are read again after restart); the
 * data of one record never does (`ingestEntries`). A record the log cannot read is counted and
 * skipped: it never stops a partition.
 */
export class IngestBatcher {
  readonly #lanes: Lane[];
  readonly #options: IngestOptions;

  constructor(options: IngestOptions) {
    this.#options = options;
    this.#lanes = Array.from({ length: options.lanes ?? INGEST_LANES }, () => ({ queue: [], writing: undefined }));
  }

  handle = async (record: ConsumedRecord): Promise<void> => {
    const { metrics, logger } = this.#options;
    const read = await this.#read(record);
    if (!read.ok) {
      metrics.skipped.inc({ topic: record.topic });
      logger.debug(
        { topic: record.topic, partition: record.partition, offset: record.offset, reason: read.reason },
        'record skipped',
      );
      return;
    }
    if (entryTime(read.entry) < this.#options.keepAfter()) {
      metrics.skipped.inc({ topic: record.topic });
      return;
    }
    if (read.entry.kind === 'event') read.entry.destinationIds = this.#options.route(read.entry.envelope);
    // A replay marker is about no message: any lane keeps it (the index takes it in any order).
    const lane = this.#lanes[read.entry.kind === 'replay-marker' ? 0 : laneOf(read.entry, this.#lanes.length)]!;
    return new Promise<void>((done, failed) => {
      lane.queue.push({ entry: read.entry, done, failed });
      lane.writing ??= this.#drain(lane);
    });
  };

  /**
   * What the record says. A Confluent-framed event is decoded by the pipeline's codec (its schema
   * id checked against the registry, as the deliverer does); the log keeps its JSON payload. A
   * registry out of reach fails the record like a database outage does.
   */
  async #read(record: ConsumedRecord): Promise<Read> {
    const { codec, topics } = this.#options;
    if (record.topic !== topics.events || record.value === null || !isConfluentFramed(record.value))
      return readRecord(record, topics);
    if (codec === undefined || codec.format !== 'confluent')
      return { ok: false, reason: 'framed event without a schema registry' };
    let decoded: Awaited<ReturnType<EnvelopeCodec['decode']>>;
    try {
      decoded = await codec.decode(record.value);
    } catch (err) {
      // A registry out of reach is an outage, not the record's fault: read it again after the restart.
      if (err instanceof SchemaRegistryUnavailableError) throw err;
      return { ok: false, reason: (err as Error).message };
    }
    if (!decoded.ok) return { ok: false, reason: decoded.message };
    return readRecord({ ...record, value: unframeConfluent(record.value)!.payload }, topics);
  }

  async #drain(lane: Lane): Promise<void> {
    // Let the records of the current fetch join the first batch.
    await new Promise((resolve) => setImmediate(resolve));
    while (lane.queue.length > 0) {
      const batch = lane.queue.splice(0, INGEST_BATCH_MAX);
      const started = performance.now();
      try {
        const entries = batch.map((p) => p.entry);
        const report = await this.#options.store.ingest(
          entries.filter((e): e is LogEntry => e.kind !== 'replay-marker'),
        );
        await this.#options.replayLog.ingest(entries);
        this.#count(report);
        this.#options.metrics.ingested.inc(batch.length);
        this.#options.metrics.batchSeconds.observe((performance.now() - started) / 1_000);
        for (const p of batch) p.done();
      } catch (err) {
        for (const p of batch) p.failed(err as Error);
      }
    }
    lane.writing = undefined;
  }

  #count(report: IngestReport): void {
    const { metrics, logger } = this.#options;
    for (const reason of report.keptAsText) metrics.keptAsText.inc({ reason });
    for (const u of report.unstored) metrics.unstored.inc(u);
    if (report.unstored.length > 0)
      logger.warn({ records: report.unstored.length }, 'records the database refused kept in the unstored table');
    if (report.deleted.messages > 0) metrics.deleted.inc({ table: 'messages' }, report.deleted.messages);
    if (report.deleted.rejections > 0) metrics.deleted.inc({ table: 'rejections' }, report.deleted.rejections);
  }
}

function entryTime(entry: ReadEntry): number {
  return entry.kind === 'event' ? entry.receivedAt : entry.at;
}
