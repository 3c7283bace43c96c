import {
  type ConsumerMetrics,
  type Drainable,
  type Kafka,
  createGroupConsumer,
  type GroupConsumer,
  type PartitionAssigner,
} from '@sluice/kafka';
import type { Consumer } from 'kafkajs';
import type { Logger } from '@sluice/logging';
import type { SnapshotRecord } from '../sync-processor.ts';

export interface SnapshotConsumerOptions {
  kafka: Kafka;
  groupId: string;
  topic: string;
  logger: Logger;
  metrics?: ConsumerMetrics;
  /** Partition assigners of the group (audience-sync: one owner, see single-owner.ts). */
  partitionAssigners?: PartitionAssigner[];
  handle: (record: SnapshotRecord, heartbeat: () => Promise<void>) => Promise<void>;
  /** First offset of the earliest unfinished sync on the partition, if any: commits never pass it. */
  heldOffset: (partition: number) => number | undefined;
}

/**
 * Reads `sluice.audiences` one record at a time (all partitions in turn, so the membership state has
 * a single writer) and commits by hand: after each record, up to the record, but never past the
 * first chunk of a sync that has not completed. A restart therefore re-reads every chunk of an
 * unfinished sync, which is what lets the sync complete correctly afterwards (docs/audiences.md).
 */
export class SnapshotConsumer implements Drainable {
  readonly consumer: Consumer;
  readonly fatal: Promise<Error>;
  readonly #group: GroupConsumer;
  #committed = new Map<number, number>();
  #busy = 0;
  #intakeStopped = false;

  private readonly options: SnapshotConsumerOptions;
  constructor(options: SnapshotConsumerOptions) {
    this.options = options;
    this.#group = createGroupConsumer(options.kafka, {
      groupId: options.groupId,
      logger: options.logger,
      maxWaitTimeInMs: 100,
      ...(options.partitionAssigners && { partitionAssigners: options.partitionAssigners }),
    });
    this.consumer = this.#group.consumer;
    this.fatal = this.#group.fatal;
    options.metrics?.watch(options.groupId, this.consumer);
    // A commit counts once Kafka confirmed it: kafkajs returns without committing while not running.
    this.#group.onCommitted((topic, partition, offset) => {
      if (topic === options.topic && offset > (this.#committed.get(partition) ?? -1))
        this.#committed.set(partition, offset);
    });
  }

  get connected(): boolean {
    return this.#group.connected;
  }

  /** Offsets of the snapshot topic this consumer's commits reached (Kafka confirmed), per partition. */
  committedOffsets(): ReadonlyMap<number, number> {
    return this.#committed;
  }

  async start(): Promise<void> {
    await this.#group.run(
      { topics: [this.options.topic], fromBeginning: true },
      {
        autoCommit: false,
        partitionsConsumedConcurrently: 1,
        eachBatch: async ({ batch, heartbeat, isRunning, isStale }) => {
          const { topic, partition } = batch;
          for (const message of batch.messages) {
            if (this.#intakeStopped || !isRunning() || isStale()) return;
            this.#busy++;
            try {
              const offset = Number(message.offset);
              await this.options.handle(
                { topic, partition, offset, key: message.key, value: message.value },
                heartbeat,
              );
              const next = Math.min(this.options.heldOffset(partition) ?? offset + 1, offset + 1);
              if (next > (this.#committed.get(partition) ?? -1)) {
                await this.consumer.commitOffsets([{ topic, partition, offset: String(next) }]);
              }
            } catch (err) {
              this.options.logger.error(
                { err, topic, partition, offset: message.offset },
                'snapshot handling failed; stopping',
              );
              this.#group.reportFatal(err as Error);
              throw err;
            } finally {
              this.#busy--;
            }
          }
        },
      },
    );
  }

  stopIntake(): void {
    this.#intakeStopped = true;
    this.consumer.pause([{ topic: this.options.topic }]);
  }

  async drain(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.#busy > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return this.#busy === 0;
  }

  async close(): Promise<void> {
    await this.#group.disconnect();
  }
}
