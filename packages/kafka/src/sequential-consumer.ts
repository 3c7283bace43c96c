import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger } from '@sluice/logging';
import { toConsumedRecord, type ConsumedRecord } from './consumed-record.ts';
import type { ConsumerMetrics } from './consumer-metrics.ts';
import { createGroupConsumer, type GroupConsumer } from './group-consumer.ts';

/** What a sequential consumer's `step` decided about one record on this read. */
export type SequentialStep =
  /** Not yet: this record and everything behind it stay unread until `untilMs`. */
  | { kind: 'wait'; untilMs: number }
  /** Take it: `run` does the work (e.g. an acknowledged produce); a rejection is fatal. */
  | { kind: 'go'; run: () => Promise<void> };

export interface SequentialConsumerOptions {
  kafka: Kafka;
  groupId: string;
  topics: string[];
  /** Decides from the record alone (no I/O), so a run of eligible records can be worked together. */
  step: (record: ConsumedRecord) => SequentialStep;
  fromBeginning?: boolean;
  /** How long a fetch waits for data; default 100 ms. */
  maxWaitTimeInMs?: number;
  logger: Logger;
  metrics?: ConsumerMetrics;
  /** Injected for tests; default `Date.now`. */
  now?: () => number;
}

/**
 * Per partition, in order, with "not yet" as a first-class answer — the delay tiers' consumer
 * (docs/reference/retries.md). The eligible records at the head of a fetched batch are worked together (their
 * produces coalesce into one acknowledged request) and their offsets resolved only after that. At
 * the first record that must wait, the partition is paused WITHOUT resolving it (kafkajs would
 * otherwise commit past it), the callback returns (never sleeping inside it, so heartbeats
 * continue) and a timer resumes it; the record is then fetched again and `step` re-checks it, which
 * also covers kafkajs forgetting pauses across a consumer restart.
 */
export class SequentialConsumer {
  readonly consumer: Consumer;
  readonly fatal: Promise<Error>;
  readonly #group: GroupConsumer;
  #timers = new Set<NodeJS.Timeout>();
  #intakeStopped = false;
  #busy = 0;

  private readonly options: SequentialConsumerOptions;
  constructor(options: SequentialConsumerOptions) {
    this.options = options;
    this.#group = createGroupConsumer(options.kafka, {
      groupId: options.groupId,
      logger: options.logger,
      maxWaitTimeInMs: options.maxWaitTimeInMs ?? 100,
    });
    this.consumer = this.#group.consumer;
    this.fatal = this.#group.fatal;
    options.metrics?.watch(options.groupId, this.consumer);
  }

  get connected(): boolean {
    return this.#group.connected;
  }

  async start(): Promise<void> {
    await this.#group.run(
      { topics: this.options.topics, fromBeginning: this.options.fromBeginning ?? true },
      {
        autoCommit: true,
        autoCommitInterval: 500,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: 16,
        eachBatch: (payload) => this.#onBatch(payload),
      },
    );
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
          this.options.logger.error(
            { err, topic: batch.topic, partition: batch.partition },
            'record step failed; stopping',
          );
          this.#group.reportFatal(err as Error);
          throw err;
        }
        resolveOffset(lastOffset);
        await heartbeat();
      }
      if (waitUntil !== undefined && !this.#intakeStopped) {
        const resume = pause();
        const timer = setTimeout(
          () => {
            this.#timers.delete(timer);
            if (!this.#intakeStopped) resume();
          },
          Math.max(0, waitUntil - now()),
        );
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
    this.consumer.pause(this.options.topics.map((topic) => ({ topic })));
  }

  async drain(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.#busy > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return this.#busy === 0;
  }

  /** Disconnecting commits the resolved offsets (autoCommit). */
  async close(): Promise<void> {
    await this.#group.disconnect();
  }
}
