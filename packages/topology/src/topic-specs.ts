import type { SluiceConfig } from '@sluice/config';
import type { TopicSpec } from '@sluice/kafka';
import { delayTopicName, parkedTopicName, waitingTopicName } from './topic-names.ts';

const RETAIN_14_DAYS = String(14 * 24 * 3_600_000);

type Spec = (topic: string, configEntries?: TopicSpec['configEntries']) => TopicSpec;

/** A topic of the config's partitions and replication factor. */
function specOf(config: SluiceConfig): Spec {
  const { partitions, replicationFactor } = config.kafka;
  return (topic, configEntries) => ({
    topic,
    numPartitions: partitions,
    replicationFactor,
    ...(configEntries && { configEntries }),
  });
}

/**
 * A destination's parked topic (docs/reference/destination-states.md), created at its first park
 * rather than at start: partitioned like the events (same key, same partition), so the events a
 * pause parks keep their order per partition. Kept until delivered, however long the pause: the
 * deliverer deletes what it delivered once the topic is drained.
 */
export function parkedTopicSpec(config: SluiceConfig, destinationId: string): TopicSpec {
  return specOf(config)(parkedTopicName(config, destinationId), [{ name: 'retention.ms', value: '-1' }]);
}

/**
 * A destination's waiting topic (docs/reference/ordering.md), created by the deliverer the first
 * time one of its users' events must wait rather than at start: partitioned like the events (same
 * key, same partition index), so a user's queue lives in one partition index; kept however long a
 * wait is (the deliverer deletes what it has done with).
 */
export function waitingTopicSpec(config: SluiceConfig, destinationId: string): TopicSpec {
  return specOf(config)(waitingTopicName(config, destinationId), [{ name: 'retention.ms', value: '-1' }]);
}

/**
 * Every topic the services create at start, with partitions, replication and topic configs from
 * the config: the pipeline's own. A destination's parked and waiting topics are not among them:
 * they are created at its first park (`parkedTopicSpec`) and by the deliverer when it is ordered (`waitingTopicSpec`),
 * so 10,000 destinations are not 10,000 topics.
 */
export function topicSpecs(config: SluiceConfig): TopicSpec[] {
  const { topics } = config.kafka;
  const spec = specOf(config);
  const longRetention = [{ name: 'retention.ms', value: RETAIN_14_DAYS }];
  // A delay record must outlive its own wait plus slack, whatever the broker default is.
  const delayRetention = (ms: number) => [{ name: 'retention.ms', value: String(Math.max(ms * 4, 24 * 3_600_000)) }];
  return [
    spec(topics.events),
    spec(topics.rejected, longRetention),
    spec(topics.retry),
    spec(topics.redeliver),
    spec(topics.deadLetter, [{ name: 'retention.ms', value: '-1' }]),
    spec(topics.attempts),
    spec(topics.audiences),
    spec(topics.audienceState, [{ name: 'cleanup.policy', value: 'compact' }]),
    // Runtime state of the destinations: a handful of keys, read whole by every service.
    spec(topics.destinationState, [{ name: 'cleanup.policy', value: 'compact' }]),
    spec(topics.destinationActions, longRetention),
    // Runtime destinations (docs/reference/runtime-destinations.md): one partition, so every change
    // is ordered against every other and each reader decides the same winner of a race.
    { ...spec(topics.destinations, [{ name: 'cleanup.policy', value: 'compact' }]), numPartitions: 1 },
    // The users' queues of the ordered destinations (docs/reference/ordering.md), compacted. Always
    // there: a destination may be ordered at any time (a reload, a runtime destination changed).
    spec(topics.ordering, [{ name: 'cleanup.policy', value: 'compact' }]),
    ...config.retry.tiersMs.map((ms) => spec(delayTopicName(config, ms), delayRetention(ms))),
  ];
}
