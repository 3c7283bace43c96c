import type { Consumer, ConsumerRunConfig, Kafka, PartitionAssigner } from 'kafkajs';
import type { Logger } from '@sluice/logging';
import { isRetriableKafkaError } from './retriable-error.ts';
import { crashVerdict, DEFAULT_RERUN_BACKOFF, rerunDelayMs, type RerunBackoff } from './crash-watch.ts';

export interface GroupConsumerSettings {
  groupId: string;
  logger: Logger;
  /** How long a fetch waits for data; lower = lower latency, more requests. Default 100 ms. */
  maxWaitTimeInMs?: number;
  /** kafkajs partition assigners; default kafkajs's round robin. */
  partitionAssigners?: PartitionAssigner[];
  /** How long the group waits for a member that went silent; default 30 s (the broker's floor is 6 s). */
  sessionTimeoutMs?: number;
  /** Waits before running again after a crash caused by Kafka; default 1 s doubling to 10 s. */
  rerunBackoff?: RerunBackoff;
}

export interface Subscription {
  topics: string[];
  fromBeginning: boolean;
}

/** An offset Kafka confirmed as committed for the group. */
export type CommittedListener = (topic: string, partition: number, offset: number) => void;

/** A kafkajs group consumer with the settings and safety nets every Sluice consumer shares. */
export interface GroupConsumer {
  readonly consumer: Consumer;
  /** Resolves when the consumer cannot go on (a record handler failed). */
  readonly fatal: Promise<Error>;
  /** A record handler failed: the process must stop (see crash-watch.ts). */
  reportFatal(err: Error): void;
  /** Joined to its group and consuming, for `/readyz` (false while waiting to run again). */
  readonly connected: boolean;
  /**
   * Connects, subscribes and runs; after a crash caused by Kafka, or a first start that met a
   * retriable answer, does the same again (`connected` stays false meanwhile).
   */
  run(subscription: Subscription, config: ConsumerRunConfig): Promise<void>;
  /** Called for every offset Kafka confirmed (a commit call can return without committing). */
  onCommitted(listener: CommittedListener): void;
  /** Stops re-running and disconnects (commits of an autoCommit consumer are flushed by kafkajs). */
  disconnect(): Promise<void>;
}

export function createGroupConsumer(kafka: Kafka, settings: GroupConsumerSettings): GroupConsumer {
  const { groupId, logger } = settings;
  const consumer = kafka.consumer({
    groupId,
    sessionTimeout: settings.sessionTimeoutMs ?? 30_000,
    heartbeatInterval: 3_000,
    maxWaitTimeInMs: settings.maxWaitTimeInMs ?? 100,
    allowAutoTopicCreation: false,
    ...(settings.partitionAssigners && { partitionAssigners: settings.partitionAssigners }),
    // kafkajs's default consumer retries, and never its own restart: crash-watch.ts decides.
    retry: { retries: 5, restartOnFailure: async () => false },
  });
  let reportFatal!: (err: Error) => void;
  const fatal = new Promise<Error>((resolve) => (reportFatal = resolve));
  let handlerFailed = false;
  let joined = false;
  let closing = false;
  let reruns = 0;
  let failedAttempts = 0;
  let rerunTimer: NodeJS.Timeout | undefined;
  let runArgs: [Subscription, ConsumerRunConfig] | undefined;
  /**
   * A start under way (connect, subscribe, run: the group's join). `disconnect` waits for it: kafkajs
   * disconnected while its `run` is still joining can go on consuming, a member of the group that
   * nobody stops (tulios/kafkajs#1639), holding its partitions for good.
   */
  let starting: Promise<void> | undefined;
  const committedListeners: CommittedListener[] = [];

  const scheduleRerun = (cause: Error) => {
    if (closing || handlerFailed || rerunTimer || !runArgs) return;
    failedAttempts += 1;
    const delayMs = rerunDelayMs(failedAttempts, settings.rerunBackoff ?? DEFAULT_RERUN_BACKOFF);
    logger.warn(
      { err: cause, groupId, delayMs, attempt: failedAttempts },
      'consumer stopped by a Kafka error; running it again',
    );
    rerunTimer = setTimeout(() => void rerun(), delayMs);
  };

  const start = (subscription: Subscription, config: ConsumerRunConfig): Promise<void> => {
    const run = (async () => {
      await consumer.connect();
      await consumer.subscribe(subscription);
      await consumer.run(config);
    })();
    starting = run;
    const settled = () => {
      if (starting === run) starting = undefined;
    };
    run.then(settled, settled);
    return run;
  };

  const rerun = async () => {
    rerunTimer = undefined;
    if (closing || handlerFailed || !runArgs) return;
    reruns += 1;
    try {
      // A crash left the consumer disconnected; kafkajs keeps the subscription, so run() re-joins.
      await start(...runArgs);
    } catch (err) {
      await consumer.disconnect().catch(() => undefined);
      scheduleRerun(err as Error);
    }
  };

  consumer.on(consumer.events.CRASH, (event) => {
    joined = false;
    const { error } = event.payload as { error: Error };
    if (crashVerdict({ handlerFailed }) === 'run-again') scheduleRerun(error);
  });
  consumer.on(consumer.events.GROUP_JOIN, () => {
    joined = true;
    if (failedAttempts > 0) logger.info({ groupId, reruns }, 'consumer joined its group again');
    failedAttempts = 0;
  });
  consumer.on(consumer.events.DISCONNECT, () => (joined = false));
  consumer.on(consumer.events.STOP, () => (joined = false));
  consumer.on(consumer.events.COMMIT_OFFSETS, (event) => {
    for (const { topic, partitions } of event.payload.topics) {
      for (const { partition, offset } of partitions) {
        for (const listener of committedListeners) listener(topic, Number(partition), Number(String(offset)));
      }
    }
  });

  return {
    consumer,
    fatal,
    reportFatal: (err) => {
      handlerFailed = true;
      reportFatal(err);
    },
    get connected() {
      return joined;
    },
    run: async (subscription, config) => {
      runArgs = [subscription, config];
      try {
        await start(subscription, config);
      } catch (err) {
        // Kafka not ready yet (a topic without a leader, a coordinator loading): joins later, as after a crash.
        if (!isRetriableKafkaError(err)) throw err;
        await consumer.disconnect().catch(() => undefined);
        scheduleRerun(err as Error);
      }
    },
    onCommitted: (listener) => void committedListeners.push(listener),
    disconnect: async () => {
      closing = true;
      if (rerunTimer) clearTimeout(rerunTimer);
      rerunTimer = undefined;
      // A start under way finishes first (joined, or failed): only then is there nothing left running.
      await starting?.catch(() => undefined);
      await consumer.disconnect();
    },
  };
}
