import { ManagedConsumer, type ManagedConsumerBase, type PartitionAssigner } from '@sluice/kafka';
import type { SnapshotRecord } from '../sync-processor.ts';

export interface SnapshotConsumerOptions extends ManagedConsumerBase {
  topic: string;
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
export class SnapshotConsumer extends ManagedConsumer {
  #committed = new Map<number, number>();

  private readonly options: SnapshotConsumerOptions;
  constructor(options: SnapshotConsumerOptions) {
    super(options, {
      maxWaitTimeInMs: 100,
      ...(options.partitionAssigners && { partitionAssigners: options.partitionAssigners }),
    });
    this.options = options;
    // A commit counts once Kafka confirmed it: kafkajs returns without committing while not running.
    this.group.onCommitted((topic, partition, offset) => {
      if (topic === options.topic && offset > (this.#committed.get(partition) ?? -1))
        this.#committed.set(partition, offset);
    });
  }

  /** Offsets of the snapshot topic this consumer's commits reached (Kafka confirmed), per partition. */
  committedOffsets(): ReadonlyMap<number, number> {
    return this.#committed;
  }

  async start(): Promise<void> {
    await this.group.run(
      { topics: [this.options.topic], fromBeginning: true },
      {
        autoCommit: false,
        partitionsConsumedConcurrently: 1,
        eachBatch: async ({ batch, heartbeat, isRunning, isStale }) => {
          const { topic, partition } = batch;
          for (const message of batch.messages) {
            if (this.intakeStopped || !isRunning() || isStale()) return;
            await this.working(async () => {
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
                this.group.reportFatal(err as Error);
                throw err;
              }
            });
          }
        },
      },
    );
  }

  override stopIntake(): void {
    this.intakeStopped = true;
    this.consumer.pause([{ topic: this.options.topic }]);
  }
}
