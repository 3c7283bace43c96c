import type { Consumer, Kafka } from 'kafkajs';
import { watchForCrash } from './crash-watch.ts';

export interface GroupConsumerSettings {
  groupId: string;
  /** How long a fetch waits for data; lower = lower latency, more requests. Default 100 ms. */
  maxWaitTimeInMs?: number;
}

/** A kafkajs group consumer with the settings and safety nets every Sluice consumer shares. */
export interface GroupConsumer {
  readonly consumer: Consumer;
  /** Resolves when the consumer cannot go on (a crash kafkajs will not restart, or a handler bug). */
  readonly fatal: Promise<Error>;
  reportFatal(err: Error): void;
  /** Whether the consumer is connected, for `/readyz`. */
  readonly connected: boolean;
}

export function createGroupConsumer(kafka: Kafka, settings: GroupConsumerSettings): GroupConsumer {
  const consumer = kafka.consumer({
    groupId: settings.groupId,
    sessionTimeout: 30_000,
    heartbeatInterval: 3_000,
    maxWaitTimeInMs: settings.maxWaitTimeInMs ?? 100,
    allowAutoTopicCreation: false,
  });
  let reportFatal!: (err: Error) => void;
  const fatal = new Promise<Error>((resolve) => (reportFatal = resolve));
  let connected = false;
  watchForCrash(consumer, (err) => reportFatal(err));
  consumer.on(consumer.events.CONNECT, () => (connected = true));
  consumer.on(consumer.events.DISCONNECT, () => (connected = false));
  return {
    consumer,
    fatal,
    reportFatal: (err) => reportFatal(err),
    get connected() {
      return connected;
    },
  };
}
