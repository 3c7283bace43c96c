import type { TopicMessages } from 'kafkajs';

/** Something that writes batches with `SafeProducer`'s guarantees: a `SafeProducer` or a `ProducerThread`. */
export interface BatchProducer {
  /** Resolves only once Kafka acknowledged every record (`acks=-1`). */
  sendBatch(topicMessages: TopicMessages[]): Promise<unknown>;
}
