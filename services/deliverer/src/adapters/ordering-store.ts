import { randomUUID } from 'node:crypto';
import {
  createGroupConsumer,
  retryTransient,
  type Admin,
  type RetryKafka,
  type GroupConsumer,
  type Kafka,
  type RecordSink,
} from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import { isEmpty, type KeyQueue } from '../domain/ordering.ts';

export interface OrderingStoreDeps {
  kafka: Kafka;
  admin: Admin;
  sink: RecordSink;
  /** The compacted state topic (`kafka.topics.ordering`). */
  topic: () => string;
  logger: Logger;
  /** Prefix of the reader's throwaway consumer group. */
  groupPrefix: string;
  /** How a partition's sync waits out Kafka's "not yet" answers; default 5 s. */
  retry?: RetryKafka;
}

/** A user's queues, one per ordered destination: the value of one `sluice.ordering` record. */
type UserQueues = Record<string, KeyQueue>;

/**
 * The users' queues of the ordered destinations (docs/reference/ordering.md), kept in the compacted
 * topic `sluice.ordering` keyed by the user key, so a user's state lands in the same partition index
 * as its events. Every replica reads the topic whole and keeps reading it (its own consumer group,
 * never committed). A partition this process owns (`sync` done since it was assigned) is written
 * only by it: records read back there are its own echoes and are ignored, so memory stays the truth.
 */
export class OrderingStore {
  readonly #users = new Map<string, UserQueues>();
  /** Per partition, the offset up to which the topic has been read. */
  readonly #readTo = new Map<number, number>();
  readonly #waiters = new Set<() => void>();
  /** Partitions whose state this process owns, and the syncs of those newly assigned. */
  readonly #owned = new Set<number>();
  readonly #syncing = new Map<number, Promise<void>>();
  #group: GroupConsumer | undefined;
  #closed = false;
  private readonly deps: OrderingStoreDeps;
  constructor(deps: OrderingStoreDeps) {
    this.deps = deps;
  }

  async start(): Promise<void> {
    const { kafka, logger } = this.deps;
    const topic = this.deps.topic();
    const groupId = `${this.deps.groupPrefix}.${randomUUID()}`;
    this.#group = createGroupConsumer(kafka, { groupId, logger, maxWaitTimeInMs: 100 });
    await this.#group.run(
      { topics: [topic], fromBeginning: true },
      {
        autoCommit: false,
        eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
          const owned = this.#owned.has(batch.partition);
          for (const m of batch.messages) {
            const key = m.key?.toString('utf8');
            if (!owned && key !== undefined) this.#apply(key, m.value);
            resolveOffset(m.offset);
          }
          await heartbeat();
          // Compaction can remove the last offsets: the batch's end and the high watermark both count.
          const end = Math.max(Number(batch.lastOffset()) + 1, Number(batch.highWatermark));
          this.#readTo.set(batch.partition, Math.max(this.#readTo.get(batch.partition) ?? 0, end));
          for (const wake of [...this.#waiters]) wake();
        },
      },
    );
  }

  get connected(): boolean {
    return this.#group?.connected ?? false;
  }

  /**
   * The main consumer's assignment: partitions no longer assigned are given up, newly assigned ones
   * are read up to the topic's current end before their records are handled (`ready`).
   */
  assigned(partitions: readonly number[]): void {
    const now = new Set(partitions);
    for (const p of [...this.#owned]) if (!now.has(p)) this.#owned.delete(p);
    for (const p of [...this.#syncing.keys()]) if (!now.has(p)) this.#syncing.delete(p);
    for (const p of now) if (!this.#owned.has(p) && !this.#syncing.has(p)) this.#syncing.set(p, this.#sync(p));
  }

  /** Resolves once partition `p`'s state is this process's to read and write. */
  ready(p: number): Promise<void> | undefined {
    if (this.#owned.has(p)) return undefined;
    let syncing = this.#syncing.get(p);
    if (!syncing) {
      syncing = this.#sync(p);
      this.#syncing.set(p, syncing);
    }
    return syncing;
  }

  get(destinationId: string, key: string): KeyQueue | undefined {
    return this.#users.get(key)?.[destinationId];
  }

  /** Sets the user's queue for a destination and writes the user's record; resolves once Kafka acknowledged it. */
  put(destinationId: string, key: string, q: KeyQueue): Promise<void> {
    const queues = { ...this.#users.get(key) };
    if (isEmpty(q) && (q.dead ?? 0) === 0) delete queues[destinationId];
    else queues[destinationId] = q;
    const empty = Object.keys(queues).length === 0;
    if (empty) this.#users.delete(key);
    else this.#users.set(key, queues);
    return this.deps.sink.send(this.deps.topic(), { key, value: empty ? null : JSON.stringify(queues) });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const wake of [...this.#waiters]) wake();
    await this.#group?.disconnect();
  }

  async #sync(p: number): Promise<void> {
    const topic = this.deps.topic();
    const read = () => this.deps.admin.fetchTopicOffsets(topic);
    const ends = await (this.deps.retry ? this.deps.retry(`list offsets of ${topic}`, read) : retryTransient(read));
    const at = ends.find((e) => e.partition === p);
    const end = at === undefined || Number(at.high) <= Number(at.low) ? 0 : Number(at.high);
    while (!this.#closed && (this.#readTo.get(p) ?? 0) < end) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.#waiters.delete(wake);
          resolve();
        };
        this.#waiters.add(wake);
      });
    }
    if (this.#syncing.has(p)) {
      this.#syncing.delete(p);
      this.#owned.add(p);
    }
  }

  #apply(key: string, value: Buffer | null): void {
    if (value === null || value.length === 0) {
      this.#users.delete(key);
      return;
    }
    try {
      this.#users.set(key, JSON.parse(value.toString('utf8')) as UserQueues);
    } catch {
      this.deps.logger.warn({ key }, 'ordering state record is not JSON: skipped');
    }
  }
}
