import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger } from '@sluice/logging';
import { toConsumedRecord, type ConsumedRecord } from './consumed-record.ts';
import type { ConsumerMetrics } from './consumer-metrics.ts';
import { createGroupConsumer, type GroupConsumer } from './group-consumer.ts';

/** What a sequential handler decided about one record. */
export type SequentialOutcome =
  | { action: 'done' }
  /** Not yet: leave this record (and everything after it) unconsumed until `untilMs`. */
  | { action: 'wait'; untilMs: number };

export const DONE: SequentialOutcome = { action: 'done' };

export interface SequentialConsumerOptions {
  kafka: Kafka;
  groupId: string;
  topics: string[];
  /** Handles records in partition order. A throw is fatal (nothing is skipped). */
  handle: (record: ConsumedRecord) => Promise<SequentialOutcome>;
  fromBeginning?: boolean;
  logger: Logger;
  metrics?: ConsumerMetrics;
  /** Injected for tests; default `Date.now`. */
  now?: () => number;
}

/**
 * One record at a time per partition, in order, with "not yet" as a first-class answer — the
 * retry tiers' consumer (SPEC §7). A `wait` pauses the partition WITHOUT resolving the record's
 * offset (kafkajs would otherwise commit past it), returns from the callback (never sleeping inside
 * it, so heartbeats continue), and resumes on a timer; the record is then fetched again and the
 * handler re-checks it, which also covers kafkajs forgetting pauses across a consumer restart.
 */
export class SequentialConsumer {
  readonly consumer: Consumer;
  readonly fatal: Promise<Error>;
  readonly #group: GroupConsumer;
  #timers = new Set<NodeJS.Timeout>();
  #intakeStopped = false;
  #busy = 0;

  constructor(private readonly options: SequentialConsumerOptions) {
    this.#group = createGroupConsumer(options.kafka, { groupId: options.groupId, maxWaitTimeInMs: 100 });
    this.consumer = this.#group.consumer;
    this.fatal = this.#group.fatal;
  }

  get connected(): boolean {
    return this.#group.connected;
  }

  async start(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: this.options.topics, fromBeginning: this.options.fromBeginning ?? true });
    await this.consumer.run({
      autoCommit: true,
      autoCommitInterval: 500,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 16,
      eachBatch: (payload) => this.#onBatch(payload),
    });
  }

  async #onBatch({ batch, resolveOffset, heartbeat, pause, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const now = this.options.now ?? Date.now;
    this.#busy++;
    try {
      for (const message of batch.messages) {
        if (!isRunning() || isStale() || this.#intakeStopped) return;
        let outcome: SequentialOutcome;
        try {
          outcome = await this.options.handle(toConsumedRecord(batch.topic, batch.partition, message));
        } catch (err) {
          this.options.logger.error({ err, topic: batch.topic, partition: batch.partition, offset: message.offset }, 'record handler failed; stopping');
          this.#group.reportFatal(err as Error);
          throw err;
        }
        if (outcome.action === 'wait') {
          const resume = pause();
          const timer = setTimeout(() => {
            this.#timers.delete(timer);
            if (!this.#intakeStopped) resume();
          }, Math.max(0, outcome.untilMs - now()));
          this.#timers.add(timer);
          return;
        }
        resolveOffset(message.offset);
        this.options.metrics?.record(this.options.groupId, batch.topic, batch.partition, batch.highWatermark, message.offset);
        await heartbeat();
      }
    } finally {
      this.#busy--;
    }
  }

  stopIntake(): void {
    this.#intakeStopped = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    this.consumer.pause(this.options.topics.map((topic) => ({ topic })));
  }

  async drain(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.#busy > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return this.#busy === 0;
  }

  /** Disconnecting commits the resolved offsets (autoCommit). */
  async close(): Promise<void> {
    await this.consumer.disconnect();
  }
}
