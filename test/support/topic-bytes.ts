import type { Kafka } from '@sluice/kafka';
import { uniqueName, waitUntil } from '@sluice/testkit';

/** What was written to a topic under the keys a `TopicBytes` meter counts. */
export interface KeyBytes {
  /** Records whose key matched (tombstones included). */
  records: number;
  /** Their key + value bytes. */
  bytes: number;
  /** The largest of them (key + value bytes). */
  largest: number;
  /** The distinct matching keys. */
  keys: number;
  /** Counting stopped once `bytes` passed `stopAfterBytes`: the true total is larger still. */
  overflowed: boolean;
}

export interface TopicBytesOptions {
  /** Which record keys to count (e.g. the keys that contain one user's key). */
  matches: (key: string) => boolean;
  /**
   * Stop reading once this many matching bytes were counted: past a bound the figure only has to
   * say "more", and reading gigabytes would slow the very pipeline being measured.
   */
  stopAfterBytes: number;
}

/**
 * Reads a topic raw from its beginning in the background, keeping no record, and counts the bytes
 * written under some keys: the size of the state a service writes per key. It reads as records are
 * written, so a compacted topic is counted before compaction removes anything.
 */
export class TopicBytes {
  readonly #counted: KeyBytes = { records: 0, bytes: 0, largest: 0, keys: 0, overflowed: false };
  readonly #keys = new Set<string>();
  /** The last value read under each matching key (first 2,000 characters; null: a tombstone). */
  readonly #last = new Map<string, string | null>();
  /** Per partition, the offset up to which the topic was read. */
  readonly #readTo = new Map<number, number>();
  readonly #kafka: Kafka;
  readonly #topic: string;
  readonly #options: TopicBytesOptions;
  #consumer: ReturnType<Kafka['consumer']> | undefined;

  private constructor(kafka: Kafka, topic: string, options: TopicBytesOptions) {
    this.#kafka = kafka;
    this.#topic = topic;
    this.#options = options;
  }

  static async start(kafka: Kafka, topic: string, options: TopicBytesOptions): Promise<TopicBytes> {
    const meter = new TopicBytes(kafka, topic, options);
    await meter.#run();
    return meter;
  }

  get counted(): KeyBytes {
    return { ...this.#counted, keys: this.#keys.size };
  }

  /** The last value read under each matching key (a stuck run prints where each queue stands). */
  get lastValues(): ReadonlyMap<string, string | null> {
    return this.#last;
  }

  /** Resolves once everything the topic held when called was read (or counting stopped). */
  async caughtUp(timeoutMs: number): Promise<KeyBytes> {
    const admin = this.#kafka.admin();
    await admin.connect();
    const ends = await admin.fetchTopicOffsets(this.#topic).finally(() => admin.disconnect());
    await waitUntil(
      () =>
        this.#counted.overflowed ||
        ends.every((e) => Number(e.high) <= Number(e.low) || (this.#readTo.get(e.partition) ?? 0) >= Number(e.high)),
      timeoutMs,
      `the reader of ${this.#topic} to reach its end offsets`,
    );
    return this.counted;
  }

  async stop(): Promise<void> {
    const consumer = this.#consumer;
    this.#consumer = undefined;
    await consumer?.disconnect();
  }

  async #run(): Promise<void> {
    const consumer = this.#kafka.consumer({ groupId: uniqueName('bytes'), maxWaitTimeInMs: 100 });
    this.#consumer = consumer;
    await consumer.connect();
    await consumer.subscribe({ topics: [this.#topic], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch, resolveOffset }) => {
        const counted = this.#counted;
        for (const m of batch.messages) {
          const key = m.key?.toString('utf8');
          if (key !== undefined && this.#options.matches(key)) {
            const size = (m.key?.length ?? 0) + (m.value?.length ?? 0);
            counted.records++;
            counted.bytes += size;
            counted.largest = Math.max(counted.largest, size);
            this.#keys.add(key);
            this.#last.set(key, m.value === null ? null : m.value.toString('utf8').slice(0, 2_000));
          }
          resolveOffset(m.offset);
        }
        // Compaction can remove the last offsets: the batch's end and the high watermark both count.
        const end = Math.max(Number(batch.lastOffset()) + 1, Number(batch.highWatermark));
        this.#readTo.set(batch.partition, Math.max(this.#readTo.get(batch.partition) ?? 0, end));
        if (counted.bytes > this.#options.stopAfterBytes && !counted.overflowed) {
          counted.overflowed = true;
          void this.stop();
        }
      },
    });
  }
}
