import { fixRequestQueueTimer } from '@sluice/kafka/request-queue-timer';
import { Kafka, logLevel } from 'kafkajs';

/** A start-up probe: true once a kafkajs admin can connect to `brokers` and list topics. */
export function kafkaAnswers(brokers: string): () => Promise<boolean> {
  fixRequestQueueTimer(); // no 1 ms wake-up per idle connection (docs/decisions.md, "Kafka usage")
  const kafka = new Kafka({
    clientId: 'local-kafka-probe',
    brokers: [brokers],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1_000,
    requestTimeout: 5_000,
    retry: { retries: 0 },
  });
  return async () => {
    const admin = kafka.admin({ retry: { retries: 0 } });
    try {
      await admin.connect();
      await admin.listTopics();
      return true;
    } catch {
      return false;
    } finally {
      await admin.disconnect().catch(() => {});
    }
  };
}
