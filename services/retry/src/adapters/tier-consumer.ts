import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { type ConsumedRecord, type ConsumerMetrics, type Drainable, createGroupConsumer, type GroupConsumer } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';

function toConsumedRecord(topic: string, partition: number, message: KafkaMessage): ConsumedRecord {
  const { offset, key, value, headers, timestamp } = message;
  return { topic, partition, offset, key, value, headers: headers ?? {}, timestamp: Number(timestamp) };
}

/** What a tier decided about one record on this read. */
export type TierStep =
  /** Not eligible yet: this record and everything behind it stay unread until `untilMs`. */
  | { kind: 'wait'; untilMs: number }
  /** Eligible: `run` moves it on (forward, re-tier, reject) and resolves once Kafka acknowledged it. */
  | { kind: 'go'; run: () => Promise<void> };

export interface TierConsumerOptions {
  kafka: Kafka;
  groupId: string;
  topic: string;
  /** Decides from the record alone (no I/O), so a run of eligible records can leave together. */
  step: (record: ConsumedRecord) => TierStep;
  logger: Logger;
  metrics?: ConsumerMetrics;
  now?: () => number;
}

/**
 * A delay tier's consumer (SPEC §7): per partition, in order, the eligible records at the head of a
 * fetched batch are moved on together (their sends coalesce into one acknowledged request), their
 * offsets resolved only after that; at the first record that is not eligible the partition is
 * paused WITHOUT resolving it, the callback returns (nothing sleeps in it, heartbeats continue) and
 * a timer resumes it. The record is then fetched again and re-checked, which also covers kafkajs
 * forgetting pauses when the consumer restarts. The same wait semantics as `SequentialConsumer`,
 * but one produce round-trip per run of due records instead of one per record: at a tier's span
 * end a whole burst becomes eligible at once, and per-record round-trips made it late by seconds.
 */
export class TierConsumer implements Drainable {
  readonly consumer: Consumer;
  readonly fatal: Promise<Error>;
  readonly #group: GroupConsumer;
  #timers = new Set<NodeJS.Timeout>();
  #intakeStopped = false;
  #busy = 0;

  constructor(private readonly options: TierConsumerOptions) {
    this.#group = createGroupConsumer(options.kafka, { groupId: options.groupId, maxWaitTimeInMs: 50 });
    this.consumer = this.#group.consumer;
    this.fatal = this.#group.fatal;
  }

  get connected(): boolean {
    return this.#group.connected;
  }

  async start(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: [this.options.topic], fromBeginning: true });
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
      const runs: (() => Promise<void>)[] = [];
      let lastOffset: string | undefined;
      let waitUntil: number | undefined;
      for (const message of batch.messages) {
        if (!isRunning() || isStale() || this.#intakeStopped) break;
        const step = this.options.step(toConsumedRecord(batch.topic, batch.partition, message));
        if (step.kind === 'wait') {
          waitUntil = step.untilMs;
          break;
        }
        runs.push(step.run);
        lastOffset = message.offset;
      }
      if (lastOffset !== undefined) {
        try {
          await Promise.all(runs.map((run) => run()));
        } catch (err) {
          this.options.logger.error({ err, topic: batch.topic, partition: batch.partition }, 'tier step failed; stopping');
          this.#group.reportFatal(err as Error);
          throw err;
        }
        resolveOffset(lastOffset);
        this.options.metrics?.record(this.options.groupId, batch.topic, batch.partition, batch.highWatermark, lastOffset);
        await heartbeat();
      }
      if (waitUntil !== undefined && !this.#intakeStopped) {
        const resume = pause();
        const timer = setTimeout(() => {
          this.#timers.delete(timer);
          if (!this.#intakeStopped) resume();
        }, Math.max(0, waitUntil - now()));
        this.#timers.add(timer);
      }
    } finally {
      this.#busy--;
    }
  }

  stopIntake(): void {
    this.#intakeStopped = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    this.consumer.pause([{ topic: this.options.topic }]);
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
