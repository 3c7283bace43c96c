export type { Admin, Kafka, Message, IHeaders, PartitionAssigner } from 'kafkajs';
export { createKafka, type KafkaClientOptions } from './kafka-client.ts';
export { ensureTopics, TopicsNotReadyError, type EnsureTopicsOptions, type TopicSpec } from './topics.ts';
export { topicOffsets, type PartitionOffsets } from './topic-offsets.ts';
export { trackedAdmin } from './tracked-admin.ts';
export { SafeProducer } from './producer.ts';
export { SideRecordRefusedError, SluiceKafkaError } from './errors.ts';
export { writeRejected, type RejectedWrite } from './write-rejected.ts';
export type { BatchProducer } from './batch-producer.ts';
export {
  RecordBatcher,
  RecordBatcherClosedError,
  type RecordBatcherOptions,
  type RecordSink,
} from './record-batcher.ts';
export {
  PRODUCER_THREAD_NAME,
  ProducerThread,
  ProducerThreadError,
  type ProducerThreadOptions,
} from './producer-thread.ts';
export { OffsetTracker } from './offset-tracker.ts';
export { type ConsumedRecord, ownedRecord } from './consumed-record.ts';
export { ConsumerMetrics } from './consumer-metrics.ts';
export type { PartitionSlots } from './slot-metrics.ts';
export { ConcurrentConsumer, type ConcurrentConsumerOptions, type RecordSlot } from './concurrent-consumer.ts';
export { GrowingConsumer, type GrowingConsumerOptions } from './growing-consumer.ts';
export { SequentialConsumer, type SequentialConsumerOptions, type SequentialStep } from './sequential-consumer.ts';
export {
  crashVerdict,
  DEFAULT_RERUN_BACKOFF,
  rerunDelayMs,
  type CrashVerdict,
  type RerunBackoff,
} from './crash-watch.ts';
export { drainAndClose, type Drainable } from './shutdown.ts';
export {
  createGroupConsumer,
  type CommittedListener,
  type GroupConsumer,
  type GroupConsumerSettings,
  type Subscription,
} from './group-consumer.ts';
export { ManagedConsumer, type ManagedConsumerBase } from './managed-consumer.ts';
export { readWholeTopic, type WholeTopicReading } from './whole-topic-reader.ts';
export {
  retryTransient,
  StartupDeadlineError,
  StartupRetry,
  type RetryKafka,
  type StartupRetryOptions,
} from './startup-retry.ts';
export { describeKafkaAnswer, isRetriableKafkaError } from './retriable-error.ts';
export { awaitKafka, checkKafkaConnection, type AwaitKafkaOptions } from './await-kafka.ts';
export { describeKafkaFailure, type KafkaFailure, type KafkaFailureCause } from './connection-failure.ts';
export { kafkaJsSecurity } from './kafka-security.ts';
export { OAuthTokenError, oidcTokenProvider, tokenFileProvider } from './oauth-token.ts';
export { COPARTITIONED_PROTOCOL, copartitionedAssigner, copartitionedOwner } from './copartitioned-assigner.ts';
export { chooseOwner, SINGLE_OWNER_PROTOCOL, singleOwnerAssigner, type OwnerClaim } from './single-owner-assigner.ts';
