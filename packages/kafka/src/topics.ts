import type { Admin, ITopicConfig } from 'kafkajs';
import { formatDuration, type SluiceConfig } from '@sluice/config';
import { retryTransient } from './retry-transient.ts';

export interface TopicSpec {
  topic: string;
  numPartitions: number;
  replicationFactor: number;
  configEntries?: { name: string; value: string }[];
}

/** The delay-tier topic for a tier of `ms` (docs/reference/retries.md): `sluice.delay.10s`, `sluice.delay.60m`. */
export function delayTopicName(config: SluiceConfig, ms: number): string {
  return `${config.kafka.topics.delayPrefix}${formatDuration(ms)}`;
}

/**
 * The parked topic of a destination (docs/reference/destination-states.md): `sluice.parked.<destinationId>`.
 * The id goes in as it is; the config refuses two ids Kafka would take for one topic name (`a.b`, `a_b`).
 */
export function parkedTopicName(config: SluiceConfig, destinationId: string): string {
  return `${config.kafka.topics.parkedPrefix}${destinationId}`;
}

/**
 * The waiting topic of an ordered destination (docs/reference/ordering.md):
 * `sluice.waiting.<destinationId>`, where a user's events wait behind a retrying head.
 */
export function waitingTopicName(config: SluiceConfig, destinationId: string): string {
  return `${config.kafka.topics.waitingPrefix}${destinationId}`;
}

const RETAIN_14_DAYS = String(14 * 24 * 3_600_000);

/** Every topic the services use, with partitions, replication and topic configs from the config. */
export function topicSpecs(config: SluiceConfig): TopicSpec[] {
  const { topics, partitions, replicationFactor } = config.kafka;
  const spec = (topic: string, configEntries?: TopicSpec['configEntries']): TopicSpec => ({
    topic,
    numPartitions: partitions,
    replicationFactor,
    ...(configEntries && { configEntries }),
  });
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
    // One parked topic per configured destination, partitioned like the events (same key, same
    // partition), so the events a pause parks keep their order per partition. Kept until delivered,
    // however long the pause: the deliverer deletes what it delivered once the topic is drained.
    ...config.destinations.map((d) => spec(parkedTopicName(config, d.id), [{ name: 'retention.ms', value: '-1' }])),
    spec(topics.destinationActions, longRetention),
    // Ordered destinations (docs/reference/ordering.md): the users' queue state, compacted, and one
    // waiting topic each, partitioned like the events so a user's queue lives in one partition index.
    ...orderingSpecs(config, spec),
    ...config.retry.tiersMs.map((ms) => spec(delayTopicName(config, ms), delayRetention(ms))),
  ];
}

/** Errors a broker returns while a just-created topic's partitions are still being placed. */
const TRANSIENT = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_FOR_PARTITION',
  'NOT_CONTROLLER',
  'REQUEST_TIMED_OUT',
]);

function isTransient(err: unknown): boolean {
  const type = (err as { type?: string }).type;
  return (
    (type !== undefined && TRANSIENT.has(type)) ||
    /does not host this topic-partition|leader/i.test(String((err as Error).message))
  );
}

/** Resolves once every partition of `topics` has a leader (metadata can lag a create on a busy broker). */
async function waitForLeaders(admin: Admin, topics: string[], deadline: number): Promise<void> {
  for (;;) {
    try {
      const meta = await admin.fetchTopicMetadata({ topics });
      if (meta.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) return;
    } catch (err) {
      if (!isTransient(err) || Date.now() > deadline) throw err;
    }
    if (Date.now() > deadline) throw new Error(`topics have no leader yet: ${topics.join(', ')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Creates the topics that are missing and waits until each has leaders; idempotent, and safe when
 * several services race to create the same topic at start-up or the broker is slow to place them.
 */
export async function ensureTopics(admin: Admin, specs: TopicSpec[], timeoutMs = 30_000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  const existing = new Set(await admin.listTopics());
  const missing = specs.filter((s) => !existing.has(s.topic));
  if (missing.length > 0) {
    const toCreate: ITopicConfig[] = missing.map((s) => ({
      topic: s.topic,
      numPartitions: s.numPartitions,
      replicationFactor: s.replicationFactor,
      ...(s.configEntries && { configEntries: s.configEntries }),
    }));
    try {
      await admin.createTopics({ topics: toCreate, waitForLeaders: false });
    } catch (err) {
      // Another service created some of them between our list and create: fine if all now exist.
      const now = new Set(await admin.listTopics());
      if (!missing.every((s) => now.has(s.topic))) throw err;
    }
  }
  await waitForLeaders(
    admin,
    specs.map((s) => s.topic),
    deadline,
  );
  // Metadata can name a leader before that broker serves the partition: ask it once for offsets.
  await Promise.all(specs.map((s) => retryTransient(() => admin.fetchTopicOffsets(s.topic))));
  return missing.map((s) => s.topic);
}

function orderingSpecs(
  config: SluiceConfig,
  spec: (topic: string, configEntries?: TopicSpec['configEntries']) => TopicSpec,
): TopicSpec[] {
  const ordered = config.destinations.filter((d) => d.ordering !== undefined);
  if (ordered.length === 0) return [];
  return [
    spec(config.kafka.topics.ordering, [{ name: 'cleanup.policy', value: 'compact' }]),
    ...ordered.map((d) => spec(waitingTopicName(config, d.id), [{ name: 'retention.ms', value: '-1' }])),
  ];
}
