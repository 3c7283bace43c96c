import type { EachBatchPayload } from 'kafkajs';
import { toConsumedRecord, type ConsumedRecord } from './consumed-record.ts';
import { ManagedConsumer, type ManagedConsumerBase } from './managed-consumer.ts';

/** What a sequential consumer's `step` decided about one record on this read. */
export type SequentialStep =
  /** Not yet: this record and everything behind it stay unread until `untilMs`. */
  | { kind: 'wait'; untilMs: number }
  /** Take it: `run` does the work (e.g. an acknowledged produce); a rejection is fatal. */
  | { kind: 'go'; run: () => Promise<void> };

export interface SequentialConsumerOptions extends ManagedConsumerBase {
  topics: string[];
  /** Decides from the record alone (no I/O), so a run of eligible records can be worked together. */
  step: (record: ConsumedRecord) => SequentialStep;
  fromBeginning?: boolean;
  /** How long a fetch waits for data; default 100 ms. */
  maxWaitTimeInMs?: number;
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
export class SequentialConsumer extends ManagedConsumer {
  #timers = new Set<NodeJS.Timeout>();

  private readonly options: SequentialConsumerOptions;
  constructor(options: SequentialConsumerOptions) {
    super(options, { maxWaitTimeInMs: options.maxWaitTimeInMs ?? 100 });
    this.options = options;
  }

  async start(): Promise<void> {
    await this.group.run(
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

  #onBatch(payload: EachBatchPayload): Promise<void> {
    return this.working(() => this.#work(payload));
  }

  async #work({ batch, resolveOffset, heartbeat, pause, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const now = this.options.now ?? Date.now;
    const runs: (() => Promise<void>)[] = [];
    let lastOffset: string | undefined;
    let waitUntil: number | undefined;
    for (const message of batch.messages) {
      if (!isRunning() || isStale() || this.intakeStopped) break;
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
        this.group.reportFatal(err as Error);
        throw err;
      }
      resolveOffset(lastOffset);
      await heartbeat();
    }
    if (waitUntil !== undefined && !this.intakeStopped) {
      const resume = pause();
      const timer = setTimeout(
        () => {
          this.#timers.delete(timer);
          if (!this.intakeStopped) resume();
        },
        Math.max(0, waitUntil - now()),
      );
      this.#timers.add(timer);
    }
  }

  override stopIntake(): void {
    this.intakeStopped = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    this.consumer.pause(this.options.topics.map((topic) => ({ topic })));
  }
}
