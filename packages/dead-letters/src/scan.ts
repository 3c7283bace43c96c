import type { Kafka, KafkaMessage } from 'kafkajs';
import { randomBytes } from 'node:crypto';
import { retryTransient } from '@sluice/kafka';
import { ReadTimeoutError } from './errors.ts';

export interface ScanRecord {
  partition: number;
  message: KafkaMessage;
}

/** Where a scan stops: per partition, the first offset not read (the high watermark it started with). */
export type ScanEnds = ReadonlyMap<number, bigint>;

export interface ScanProgress {
  /** Records read so far. */
  read: number;
  /** Records between the low watermarks and `ends`: what a full scan reads. */
  total: number;
}

export interface ScanOptions {
  /** Stop offsets; default: the topic's high watermarks when the scan starts. */
  ends?: ScanEnds;
  /**
   * Start offsets of the partitions to read (others are not read); default: every partition from
   * its beginning. An offset below a partition's low watermark starts at the low watermark.
   */
  starts?: ScanEnds;
  /** Fail when no record arrives for this long (the broker is slow or gone). */
  idleTimeoutMs: number;
  /** Called after each record. */
  onProgress?: (progress: ScanProgress) => void;
}

export interface ScanSummary extends ScanProgress {
  ends: ScanEnds;
  /** True when `onRecord` asked to stop before the end. */
  stopped: boolean;
}

const IDLE_CHECK_MS = 250;

/**
 * Reads a topic from the beginning up to `ends`, one record at a time: `onRecord` is awaited before
 * the next record of its partition, so memory holds no more than the consumer's fetch buffers,
 * however long the topic. `onRecord` returns `false` to stop early. Records written after the scan
 * started are not waited for; a broker that stops delivering fails with `ReadTimeoutError` after
 * `idleTimeoutMs` without a record (time spent inside `onRecord` does not count). Uses a throw-away
 * consumer group that commits nothing.
 */
export async function scanTopic(
  kafka: Kafka,
  topic: string,
  // biome-ignore lint/suspicious/noConfusingVoidType: callers that never stop the scan return nothing
  onRecord: (record: ScanRecord) => boolean | void | Promise<boolean | void>,
  options: ScanOptions,
): Promise<ScanSummary> {
  const admin = kafka.admin();
  await admin.connect();
  let offsets: { partition: number; low: string; high: string }[];
  try {
    offsets = await retryTransient(() => admin.fetchTopicOffsets(topic));
  } finally {
    await admin.disconnect();
  }
  const ends = new Map(options.ends ?? offsets.map((o) => [o.partition, BigInt(o.high)]));
  const starts = new Map<number, bigint>();
  const remaining = new Set<number>();
  let total = 0;
  for (const o of offsets) {
    const low = BigInt(o.low);
    const wanted = options.starts === undefined ? low : options.starts.get(o.partition);
    if (wanted === undefined) continue;
    const start = wanted > low ? wanted : low;
    // Offsets named by an index (`starts`) may be gone or never written: such a scan ends at the
    // high watermark at the latest instead of waiting for them.
    const asked = ends.get(o.partition) ?? 0n;
    const end = options.starts !== undefined && asked > BigInt(o.high) ? BigInt(o.high) : asked;
    ends.set(o.partition, end);
    if (end > start) {
      starts.set(o.partition, start);
      remaining.add(o.partition);
      total += Number(end - start);
    }
  }
  const summary = { read: 0, total, ends, stopped: false };
  if (remaining.size === 0) return summary;

  const groupId = `sluice-dead-letters-${randomBytes(6).toString('hex')}`;
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
  let finish!: (error?: unknown) => void;
  const finished = new Promise<void>((resolve, reject) => {
    finish = (error) => (error === undefined ? resolve() : reject(error));
  });
  // A consumer that re-joins its group (after a long stall in `onRecord`) starts again from the
  // beginning: records below `seen` were handed out already.
  const seen = new Map<number, bigint>();
  let done = false;
  let busy = false;
  let lastActivity = Date.now();
  const end = (error?: unknown) => {
    if (done) return;
    done = true;
    finish(error);
  };
  const idle = setInterval(() => {
    if (busy || Date.now() - lastActivity <= options.idleTimeoutMs) return;
    end(new ReadTimeoutError(topic, options.idleTimeoutMs));
  }, IDLE_CHECK_MS);
  try {
    await consumer.connect();
    // Read from given starts: each time the group is joined (the first time, and again after a
    // crash and restart, which drops earlier seeks) the partitions move to where reading stands;
    // kafkajs applies the seek at the next fetch. The others stay at their end and give nothing.
    if (options.starts !== undefined)
      consumer.on(consumer.events.GROUP_JOIN, () => {
        for (const [partition, offset] of starts)
          consumer.seek({ topic, partition, offset: String(seen.get(partition) ?? offset) });
      });
    await consumer.subscribe({ topic, fromBeginning: options.starts === undefined });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        lastActivity = Date.now();
        const stop = ends.get(partition);
        const offset = BigInt(message.offset);
        const from = seen.get(partition) ?? starts.get(partition);
        if (done || stop === undefined || from === undefined || offset >= stop || offset < from) return;
        seen.set(partition, offset + 1n);
        summary.read += 1;
        busy = true;
        try {
          if ((await onRecord({ partition, message })) === false) {
            summary.stopped = true;
            end();
            return;
          }
        } catch (err) {
          end(err);
          return;
        } finally {
          busy = false;
          lastActivity = Date.now();
        }
        options.onProgress?.({ read: summary.read, total });
        if (offset >= stop - 1n) {
          remaining.delete(partition);
          if (remaining.size === 0) end();
        }
      },
    });
    await finished;
  } finally {
    clearInterval(idle);
    await consumer.disconnect();
  }
  return summary;
}
