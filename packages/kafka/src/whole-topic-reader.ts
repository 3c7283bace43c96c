import type { EachBatchHandler, Kafka } from 'kafkajs';
import { randomUUID } from 'node:crypto';
import type { Logger } from '@sluice/logging';
import { createGroupConsumer, type GroupConsumer } from './group-consumer.ts';

export interface WholeTopicReading {
  topic: string;
  /** Prefix of the throwaway group's id (`<prefix>.<random UUID>`). */
  groupPrefix: string;
  logger: Logger;
  /** Resolves each record it handled itself (`resolveOffset`); nothing is committed. */
  eachBatch: EachBatchHandler;
}

/**
 * Reads `topic` from its start, and goes on following it, in a consumer group of its own (a
 * random id) that never commits: how a process reads a compacted topic whole at every start (the
 * destination states, the destination catalog). After a Kafka error the consumer runs again from
 * the start; the handler passes over what it already read.
 */
export async function readWholeTopic(kafka: Kafka, reading: WholeTopicReading): Promise<GroupConsumer> {
  const { topic, logger, eachBatch } = reading;
  const group = createGroupConsumer(kafka, {
    groupId: `${reading.groupPrefix}.${randomUUID()}`,
    logger,
    maxWaitTimeInMs: 100,
  });
  await group.run({ topics: [topic], fromBeginning: true }, { autoCommit: false, eachBatch });
  return group;
}
