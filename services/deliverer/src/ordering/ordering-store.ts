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
import { ORDERING_WRITER_HEADER } from '../service/constants.ts';
import type { QueueState } from './queue-rules.ts';
import { decodeStateRecord, type QueueStates, stateKey } from './queue-states.ts';

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
  /** The queues held in memory, against their budget. */
  states: QueueStates;
  /** Told of the bytes of each state record written. */
  onWritten?: (bytes: number) => void;
}

/** Whose queue a state record is: the user `key`'s for a destination, kept on the user's partition. */
export interface QueueKey {
  destinationId: string;
  key: string;
  partition: number;
}

/** A queue's state record not yet sent: its newest value, and who waits for it. */
interface UnsentWrite {
  value: string | null;
  partition: number;
  listKeysDone: string[];
  done: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * The users' queues of the ordered destinations (docs/reference/ordering.md), kept in the compacted
 * topic `sluice.ordering`, one record per destination and user (`<destinationId>/<user key>`),
 * written to the partition index of the user's events. Every replica reads the topic whole and
 * keeps reading it (its own consumer group, never committed). A partition this process owns (`sync`
 * done since it was assigned) is written only by it: records read back there are its own echoes
 * and are ignored, so memory stays the truth.
 */
export class OrderingStore {
  /** Per partition, the offset up to which the topic has been read. */
  readonly #readTo = new Map<number, number>();
  readonly #waiters = new Set<() => void>();
  /** Partitions whose state this process owns, and the syncs of those newly assigned. */
  readonly #owned = new Set<number>();
  readonly #syncing = new Map<number, Promise<void>>();
  #group: GroupConsumer | undefined;
  #closed = false;
  /** The queues put since the last flush (`put`), by record key, in the order first put. */
  readonly #unsent = new Map<string, UnsentWrite>();
  /** Queues whose last record was sent and not yet acknowledged: their next waits for it (`put`). */
  readonly #sending = new Set<string>();
  #flushSoon = false;
  /** This process, in the header of each state record it writes (`#ownEcho`). */
  readonly #writer = randomUUID();
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
            if (!owned && key !== undefined && !this.#ownEcho(m.headers)) this.#apply(key, m.value, batch.partition);
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
   * A record this process wrote: memory already holds its state or a newer one. Read back while
   * the partition is not owned (given up, then assigned again before the reader passed its own
   * writes), it would set a queue back to what it was before the changes made since.
   */
  #ownEcho(headers: Readonly<Record<string, { toString(): string } | undefined>> | undefined): boolean {
    return headers?.[ORDERING_WRITER_HEADER]?.toString() === this.#writer;
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

  get(destinationId: string, key: string): QueueState | undefined {
    return this.deps.states.get(destinationId, key);
  }

  /** Whether a new queue may start (the memory budget is not spent). */
  admitsNew(): boolean {
    return this.deps.states.admitsNew();
  }

  /**
   * Sets the user's queue for a destination (in memory at once) and writes its record to
   * `queue.partition` (the user's); resolves once Kafka acknowledged a record that carries this state or
   * a later one. Undefined or idle: the record is deleted. The puts of one queue within a tick leave
   * as one record, the newest (`sluice.ordering` is compacted: only the newest counts), and so do
   * those made while the queue's previous record is on its way: one record per queue is in flight
   * at a time, so a burst of parks costs a state record per round trip to Kafka, not one each; the
   * writes of one queue keep their order.
   */
  put(queue: QueueKey, q: QueueState | undefined): Promise<void> {
    const { destinationId, key, partition } = queue;
    const { value, listKeyDone } = this.deps.states.set(destinationId, key, q);
    const recordKey = stateKey(destinationId, key);
    let write = this.#unsent.get(recordKey);
    if (!write) {
      let resolve!: () => void;
      let reject!: (err: unknown) => void;
      const done = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      write = { value, partition, listKeysDone: [], done, resolve, reject };
      this.#unsent.set(recordKey, write);
      if (!this.#sending.has(recordKey)) this.#flushNextTurn();
    }
    write.value = value;
    write.partition = partition;
    if (listKeyDone !== undefined) write.listKeysDone.push(listKeyDone);
    return write.done;
  }

  #flushNextTurn(): void {
    if (this.#flushSoon) return;
    this.#flushSoon = true;
    setImmediate(() => this.#flush());
  }

  /**
   * Sends the newest state of every queue put since the last flush whose previous record Kafka
   * acknowledged, in the order they were first put; the others go once it did.
   */
  #flush(): void {
    this.#flushSoon = false;
    const writes = [...this.#unsent].filter(([key]) => !this.#sending.has(key));
    const topic = this.deps.topic();
    for (const [key, w] of writes) {
      this.#unsent.delete(key);
      this.#sending.add(key);
      this.deps.onWritten?.(Buffer.byteLength(key) + (w.value === null ? 0 : Buffer.byteLength(w.value)));
      const sent = this.deps.sink.send(topic, {
        key,
        value: w.value,
        partition: w.partition,
        headers: { [ORDERING_WRITER_HEADER]: this.#writer },
      });
      // Every queue of a list-format record was written again: that record (keyed by the user alone) goes.
      const after =
        w.listKeysDone.length === 0
          ? sent
          : sent.then(() =>
              Promise.all(w.listKeysDone.map((k) => this.deps.sink.send(topic, { key: k, value: null }))),
            );
      after
        .then(
          () => w.resolve(),
          (err: unknown) => w.reject(err),
        )
        .finally(() => {
          this.#sending.delete(key);
          if (this.#unsent.has(key)) this.#flushNextTurn();
        });
    }
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

  #apply(key: string, value: Buffer | null, partition: number): void {
    const record = decodeStateRecord(key, value);
    if (record.kind === 'malformed')
      this.deps.logger.warn({ key, partition, reason: record.reason }, 'ordering state record not readable: skipped');
    else this.deps.states.apply(record);
  }
}
