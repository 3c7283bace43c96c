import type { Consumer, Kafka } from 'kafkajs';
import type { Logger } from '@sluice/logging';
import type { ConsumerMetrics } from './consumer-metrics.ts';
import { createGroupConsumer, type GroupConsumer, type GroupConsumerSettings } from './group-consumer.ts';
import type { Drainable } from './shutdown.ts';

/** What every Sluice consumer is built from. */
export interface ManagedConsumerBase {
  kafka: Kafka;
  groupId: string;
  logger: Logger;
  metrics?: ConsumerMetrics;
  /** Group membership timings (tests shrink them); defaults in group-consumer.ts. */
  membership?: Pick<GroupConsumerSettings, 'sessionTimeoutMs' | 'rerunBackoff'>;
}

/**
 * The part every Sluice consumer shares: its group consumer (crash-watch, confirmed commits), its
 * metrics, readiness, a count of the work in hand and the shutdown steps built on it. Subclasses
 * decide how records are read and committed, and wrap each piece of work in `working`.
 */
export abstract class ManagedConsumer implements Drainable {
  readonly consumer: Consumer;
  /** Resolves when the consumer cannot go on (a record handler failed). */
  readonly fatal: Promise<Error>;
  protected readonly group: GroupConsumer;
  /** Set by `stopIntake`: no new record is taken. */
  protected intakeStopped = false;
  #busy = 0;
  #idle: (() => void)[] = [];
  /** Stops this consumer's lag series and their interval (`close`). */
  readonly #unwatch: () => void;

  protected constructor(base: ManagedConsumerBase, settings: Omit<GroupConsumerSettings, 'groupId' | 'logger'> = {}) {
    this.group = createGroupConsumer(base.kafka, {
      groupId: base.groupId,
      logger: base.logger,
      ...base.membership,
      ...settings,
    });
    this.consumer = this.group.consumer;
    this.fatal = this.group.fatal;
    this.#unwatch = base.metrics?.watch(base.groupId, this.consumer) ?? (() => undefined);
  }

  /** Joined to its group and consuming (`/readyz`). */
  get connected(): boolean {
    return this.group.connected;
  }

  /** Pieces of work in hand right now. */
  protected get busy(): number {
    return this.#busy;
  }

  /** Runs one piece of work, counted for `drain`. */
  protected async working<T>(work: () => Promise<T>): Promise<T> {
    this.#busy += 1;
    try {
      return await work();
    } finally {
      this.#busy -= 1;
      if (this.#busy === 0) this.#idle.splice(0).forEach((wake) => wake());
    }
  }

  /** Stops taking new records (SIGTERM step 1). Work in hand keeps running. */
  abstract stopIntake(): void;

  /** Waits for the work in hand, up to `timeoutMs`; what is unfinished is handed back uncommitted. */
  async drain(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.#busy > 0 && Date.now() < deadline) {
      await Promise.race([
        new Promise<void>((resolve) => this.#idle.push(resolve)),
        new Promise((r) => setTimeout(r, Math.min(100, Math.max(0, deadline - Date.now())))),
      ]);
    }
    return this.#busy === 0;
  }

  /** Leaves the group (an autoCommit consumer's commits are flushed by kafkajs). */
  async close(): Promise<void> {
    try {
      await this.group.disconnect();
    } finally {
      this.#unwatch();
    }
  }
}
