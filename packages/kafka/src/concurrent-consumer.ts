import type { EachBatchPayload, KafkaMessage, PartitionAssigner } from 'kafkajs';
import { toConsumedRecord, type ConsumedRecord } from './consumed-record.ts';
import { ManagedConsumer, type ManagedConsumerBase } from './managed-consumer.ts';
import { OffsetTracker } from './offset-tracker.ts';
import type { PartitionSlots } from './slot-metrics.ts';

export interface ConcurrentConsumerOptions extends ManagedConsumerBase {
  topics: string[];
  /**
   * Handles one record. It must not throw for bad input (send that to a rejected topic); a throw is
   * fatal. `slot.release()` gives the record's slot and in-flight bytes back before it finishes.
   */
  handle: (record: ConsumedRecord, slot: RecordSlot) => Promise<void>;
  /** Records handled at once per partition. */
  maxInFlightPerPartition: number;
  /**
   * Bytes (key + value) of the records handled at once, across partitions; unbounded without it.
   * A record is handed out when it fits, or when nothing else is in flight (one record larger than
   * the bound still passes, alone).
   */
  maxInFlightBytes?: number;
  /** How often finished offsets are committed; default 200 ms. */
  commitIntervalMs?: number;
  fromBeginning?: boolean;
  /** Called when a partition comes to have half its slots taken (see `crowded`). */
  onCrowded?: () => void;
  /** kafkajs partition assigners of the group; default kafkajs's round robin. */
  partitionAssigners?: PartitionAssigner[];
  /** Told of each assignment (topic → partitions) when the group is joined, before its records are handed out. */
  onAssigned?: (assignment: Record<string, number[]>) => void;
}

type Slot = () => void;

/**
 * What is left of a fetched batch when its partition's slots are all taken: handed out from here
 * as slots free up, so a full partition is not fetched again (and most of the fetch dropped) for
 * every few slots. At most one batch per partition (kafkajs's `maxBytesPerPartition`, 1 MB).
 */
interface FetchedRest {
  topic: string;
  partition: number;
  key: string;
  tracker: OffsetTracker;
  messages: KafkaMessage[];
  /** The first message not handed out yet. */
  next: number;
  payload: Pick<EachBatchPayload, 'resolveOffset' | 'isRunning' | 'isStale'>;
}

/** Why handing out stopped: the batch is done, every slot is taken, or the in-flight bytes are. */
type HandOutStop = 'done' | 'full' | 'bytes';

/**
 * A handed-out record's place among the records handled at once. A handler that is about to wait
 * for something other than its own work (another record's outcome) releases it: the partition's
 * next record is handed out at once, while this one stays unfinished, so the committed offset
 * stays below it (a crash reads it again). The caller bounds what it keeps waiting that way.
 */
export interface RecordSlot {
  /** Gives the slot and the record's in-flight bytes back (they count as `detachedBytes` until it finishes). Idempotent. */
  release(): void;
}

/**
 * Many records in flight per partition, with the classic kafkajs traps closed:
 * - offsets are committed only below the lowest unfinished record (an `OffsetTracker` per partition);
 * - a record this consumer already handed out is not handed out again when kafkajs re-fetches from
 *   the committed offset (the group re-joined and the partition stayed ours);
 * - handlers run outside kafkajs's callback, so heartbeats keep flowing while they work; a
 *   partition whose slots are all taken is paused (never waited for inside the callback, which
 *   would stop kafkajs fetching for every other partition of the broker) and resumed as they free;
 * - a handler that throws is reported through `fatal` so the process exits instead of idling with
 *   a healthy face; a crash caused by Kafka runs the consumer again (crash-watch.ts).
 */
export class ConcurrentConsumer extends ManagedConsumer {
  #trackers = new Map<string, OffsetTracker>();
  /** Partitions paused because every slot is taken (`#pauseFull`), resumed as slots free up. */
  readonly #full = new Set<string>();
  /** Per full partition, the rest of its last batch, handed out as slots free up (`FetchedRest`). */
  readonly #rests = new Map<string, FetchedRest>();
  #commitTimer: NodeJS.Timeout | undefined;
  /** Bytes of the records in flight, and who waits for some of them to finish. */
  #bytes = 0;
  #bytesWaiting: Slot[] = [];
  /** Bytes of the unfinished records whose handler released its slot. */
  #detachedBytes = 0;
  /** Topics not read for now (`hold`): nothing more of them is handed out until `release`. */
  readonly #held = new Set<string>();

  private readonly options: ConcurrentConsumerOptions;
  constructor(options: ConcurrentConsumerOptions) {
    super(options, {
      maxWaitTimeInMs: 100,
      ...(options.partitionAssigners && { partitionAssigners: options.partitionAssigners }),
    });
    this.options = options;
    options.metrics?.watchSlots(options.groupId, () => this.partitionSlots());
    // Only a commit Kafka confirmed moves the committed position: kafkajs's commitOffsets returns
    // without committing while the consumer is not running (e.g. waiting to run again after a crash).
    this.group.onCommitted((topic, partition, offset) =>
      this.#trackers.get(partitionKey(topic, partition))?.committed(offset),
    );
    this.consumer.on(this.consumer.events.GROUP_JOIN, (event) => {
      // Forget partitions we no longer own: their offsets are another member's to commit.
      const assigned = event.payload.memberAssignment;
      for (const key of this.#trackers.keys()) {
        const [topic, partition] = splitKey(key);
        if (!assigned[topic]?.includes(partition)) this.#trackers.delete(key);
      }
      // A re-join (after a crash, a rebalance) may forget kafkajs's pauses; the holds stand. kafkajs
      // fetches from the committed offsets again, so the rests kept from before are dropped.
      this.#rests.clear();
      this.#pauseHeld();
      if (this.intakeStopped) this.#pauseAll();
      // A partition paused for its slots whose records all finished meanwhile reads on (one still
      // full is paused again by its next batch).
      for (const key of [...this.#full]) this.#resumeIfRoom(key);
      options.onAssigned?.(assigned);
    });
  }

  /** Bytes (key + value) of the records being handled right now, across partitions. */
  get inFlightBytes(): number {
    return this.#bytes;
  }

  /** Bytes (key + value) of the unfinished records whose handler released its slot (`RecordSlot`). */
  get detachedBytes(): number {
    return this.#detachedBytes;
  }

  /** Records being handled right now, across partitions. */
  get inFlight(): number {
    return this.busy;
  }

  /** Per partition this member has handed records of: what its handlers hold, and why it is paused. */
  partitionSlots(): PartitionSlots[] {
    const slots: PartitionSlots[] = [];
    for (const [key, tracker] of this.#trackers) {
      const [topic, partition] = splitKey(key);
      const rest = this.#rests.get(key);
      const paused = this.#held.has(topic) ? 'held' : this.#full.has(key) ? 'slots' : undefined;
      slots.push({
        topic,
        partition,
        inSlot: tracker.holding,
        detached: tracker.inFlight - tracker.holding,
        kept: rest ? rest.messages.length - rest.next : 0,
        ...(paused && { paused }),
      });
    }
    return slots;
  }

  /**
   * Some partition has at least half its slots taken: records held in flight there are about to
   * hold back the records behind them (a partition with every slot taken reads nothing more).
   */
  get crowded(): boolean {
    const half = this.#crowdedAt();
    for (const tracker of this.#trackers.values()) if (tracker.holding >= half) return true;
    return false;
  }

  /**
   * Stops reading `topic` until `release`: records of it fetched but not yet handed out are not
   * handed out (they are fetched again after the release, from the first one not handed out);
   * records already in a handler finish. Idempotent.
   */
  hold(topic: string): void {
    this.#held.add(topic);
    for (const [key, rest] of this.#rests) if (rest.topic === topic) this.#rests.delete(key);
    this.#pauseHeld();
  }

  /** Reads `topic` again (unless intake stopped: a shutdown keeps every topic paused). */
  release(topic: string): void {
    if (!this.#held.delete(topic) || this.intakeStopped) return;
    try {
      this.consumer.resume([{ topic }]);
    } catch {
      // Not running yet: nothing was paused.
    }
  }

  #pauseHeld(): void {
    if (this.#held.size === 0) return;
    try {
      this.consumer.pause([...this.#held].map((topic) => ({ topic })));
    } catch {
      // Not running yet (kafkajs pauses only a running consumer): the batch loop checks the holds
      // anyway, and the group join pauses them again.
    }
  }

  #crowdedAt(): number {
    return Math.ceil(this.options.maxInFlightPerPartition / 2);
  }

  async start(): Promise<void> {
    await this.group.run(
      { topics: this.options.topics, fromBeginning: this.options.fromBeginning ?? true },
      {
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: 16,
        eachBatch: (payload) => this.#onBatch(payload),
      },
    );
    this.#commitTimer = setInterval(
      () => void this.commit().catch(() => undefined),
      this.options.commitIntervalMs ?? 200,
    );
  }

  async #onBatch(payload: EachBatchPayload): Promise<void> {
    const { topic, partition } = payload.batch;
    const key = partitionKey(topic, partition);
    let tracker = this.#trackers.get(key);
    if (!tracker) this.#trackers.set(key, (tracker = new OffsetTracker()));
    const rest: FetchedRest = { topic, partition, key, tracker, messages: payload.batch.messages, next: 0, payload };
    for (;;) {
      if (!this.#mayHandOut(rest)) return;
      const stop = this.#handOut(rest);
      if (stop === 'done') return;
      if (stop === 'full') {
        // Full: this partition is paused, the rest of the batch kept, and the callback returns at
        // once. Waiting here would hold kafkajs's fetch loop, and with it every other partition
        // this consumer reads from the same broker (kafkajs fetches again only once every batch
        // of a fetch is done with).
        this.#rests.set(key, rest);
        this.#pauseFull(topic, partition);
        return;
      }
      await this.#bytesFreed(payload.heartbeat);
    }
  }

  #mayHandOut(rest: FetchedRest): boolean {
    const { isRunning, isStale } = rest.payload;
    return isRunning() && !isStale() && !this.intakeStopped && !this.#held.has(rest.topic);
  }

  /**
   * Hands out the rest's records while its partition has a free slot and the in-flight bytes
   * room; synchronous from each check up to `#run`, which counts the bytes, so two partitions
   * woken together cannot both take the same room.
   */
  #handOut(rest: FetchedRest): HandOutStop {
    const { tracker, messages } = rest;
    let last: string | undefined;
    try {
      for (; rest.next < messages.length; rest.next++) {
        const message = messages[rest.next]!;
        const offset = Number(message.offset);
        if (offset <= tracker.highestStarted) {
          // Already handed to a handler by this consumer: kafkajs fetches from the committed offset
          // again after the group re-joined with this partition still ours (a broker outage, a
          // rebalance elsewhere in the group). That handler finishes it; another would only
          // deliver it twice.
          last = message.offset;
          continue;
        }
        if (tracker.holding >= this.options.maxInFlightPerPartition) return 'full';
        const size = (message.key?.length ?? 0) + (message.value?.length ?? 0);
        if (!this.#fits(size)) return 'bytes';
        tracker.begin(offset);
        if (tracker.holding === this.#crowdedAt()) this.options.onCrowded?.();
        last = message.offset;
        void this.#run(toConsumedRecord(rest.topic, rest.partition, message), rest.key, tracker, offset, size);
      }
      return 'done';
    } finally {
      // Moves kafkajs's fetch position (read when it fetches the partition next) past what was
      // handed out; what is committed comes from the tracker. A stale batch is re-fetched anyway.
      if (last !== undefined && !rest.payload.isStale()) rest.payload.resolveOffset(last);
    }
  }

  /** One record's handler; a throw is fatal and leaves the record unfinished (never committed). */
  async #run(record: ConsumedRecord, key: string, tracker: OffsetTracker, offset: number, size: number): Promise<void> {
    this.#bytes += size;
    let detached = false;
    const slot: RecordSlot = {
      release: () => {
        if (detached) return;
        detached = true;
        tracker.detach(offset);
        this.#bytes -= size;
        this.#detachedBytes += size;
        this.#resumeIfRoom(key);
        this.#bytesWaiting.splice(0).forEach((wake) => wake());
      },
    };
    await this.working(async () => {
      try {
        await this.options.handle(record, slot);
        tracker.finish(offset);
        if (!detached) this.#resumeIfRoom(key);
      } catch (err) {
        this.options.logger.error(
          { err, topic: record.topic, partition: record.partition, offset },
          'record handler failed; stopping',
        );
        this.group.reportFatal(err as Error);
      } finally {
        if (detached) this.#detachedBytes -= size;
        else this.#bytes -= size;
        this.#bytesWaiting.splice(0).forEach((wake) => wake());
      }
    });
  }

  #fits(size: number): boolean {
    const max = this.options.maxInFlightBytes;
    return max === undefined || this.#bytes === 0 || this.#bytes + size <= max;
  }

  /** Waits for a record to finish (or a second to pass), then heartbeats. */
  #bytesFreed(heartbeat: () => Promise<void>): Promise<void> {
    return this.#wake(heartbeat, (wake) => this.#bytesWaiting.push(wake));
  }

  #pauseFull(topic: string, partition: number): void {
    this.#full.add(partitionKey(topic, partition));
    try {
      this.consumer.pause([{ topic, partitions: [partition] }]);
    } catch {
      // Not running (stopping): nothing more is fetched anyway.
    }
  }

  /**
   * A partition paused for its slots: the rest of its batch is handed out as slots free up; once
   * that is done, it is fetched again when a quarter of its slots are free.
   */
  #resumeIfRoom(key: string): void {
    if (!this.#full.has(key)) return;
    const rest = this.#rests.get(key);
    if (rest && this.#mayHandOut(rest)) {
      const stop = this.#handOut(rest);
      if (stop === 'full') return;
      if (stop === 'bytes') {
        this.#bytesWaiting.push(() => this.#resumeIfRoom(key));
        return;
      }
    }
    this.#rests.delete(key);
    const tracker = this.#trackers.get(key);
    const max = this.options.maxInFlightPerPartition;
    if (tracker && tracker.holding > max - Math.ceil(max / 4)) return;
    this.#full.delete(key);
    const [topic, partition] = splitKey(key);
    if (this.intakeStopped || this.#held.has(topic)) return;
    try {
      this.consumer.resume([{ topic, partitions: [partition] }]);
    } catch {
      // Not running: nothing was paused.
    }
  }

  /** Waits until the waker handed to `enqueue` is called, or a second passes; then heartbeats. */
  async #wake(heartbeat: () => Promise<void>, enqueue: (wake: Slot) => void): Promise<void> {
    const freed = new Promise<void>((resolve) => enqueue(resolve));
    const tick = new Promise<void>((resolve) => setTimeout(resolve, 1_000).unref());
    await Promise.race([freed, tick]);
    await heartbeat().catch(() => undefined);
  }

  /**
   * Commits, per partition, the offset below which every record has been handled. A position
   * counts as committed only once Kafka confirmed it (`onCommitted`); until then every call offers
   * it again.
   */
  async commit(): Promise<void> {
    const offsets: { topic: string; partition: number; offset: string }[] = [];
    for (const [key, tracker] of this.#trackers) {
      const next = tracker.uncommitted();
      if (next === undefined) continue;
      const [topic, partition] = splitKey(key);
      offsets.push({ topic, partition, offset: String(next) });
    }
    if (offsets.length === 0 || !this.group.connected) return;
    await this.consumer.commitOffsets(offsets);
  }

  /** Stops taking new records (SIGTERM step 1). In-flight handlers keep running. */
  override stopIntake(): void {
    this.intakeStopped = true;
    this.#rests.clear();
    this.#pauseAll();
    this.#bytesWaiting.splice(0).forEach((wake) => wake());
  }

  /**
   * Pauses every topic once intake stopped. kafkajs pauses only a running consumer: one waiting to
   * run again after a crash (or not started) is paused by its next group join; nothing is handed
   * out meanwhile anyway (`#mayHandOut`).
   */
  #pauseAll(): void {
    try {
      this.consumer.pause(this.options.topics.map((topic) => ({ topic })));
    } catch {
      // Not running: see above.
    }
  }

  override async close(): Promise<void> {
    if (this.#commitTimer) clearInterval(this.#commitTimer);
    await this.commit().catch((err) => this.options.logger.warn({ err }, 'final commit failed'));
    await super.close();
  }
}

function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

function splitKey(key: string): [string, number] {
  const i = key.lastIndexOf('\u0000');
  return [key.slice(0, i), Number(key.slice(i + 1))];
}
