import type { Admin, ITopicConfig } from 'kafkajs';
import { formatDuration, type SluiceConfig } from '@sluice/config';
import { type RetryKafka, StartupRetry } from './startup-retry.ts';

/** How long `ensureTopics` waits out "not yet" answers when no start-up retry is given. */
const DEFAULT_ENSURE_TIMEOUT_MS = 30_000;

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

/** Metadata named a partition without a leader: the broker is still placing a just-created topic. */
export class TopicsNotReadyError extends Error {
  readonly code = 'topics_not_ready';
  readonly retryable = true;
  constructor(topics: string[]) {
    super(`topics have no leader yet: ${topics.join(', ')}`);
    this.name = 'TopicsNotReadyError';
  }
}

/** Resolves once every partition of `topics` has a leader (metadata can lag a create on a busy broker). */
async function checkLeaders(admin: Admin, topics: string[]): Promise<void> {
  const meta = await admin.fetchTopicMetadata({ topics });
  const leaderless = meta.topics.filter((t) => t.partitions.length === 0 || t.partitions.some((p) => p.leader < 0));
  if (leaderless.length > 0) throw new TopicsNotReadyError(leaderless.map((t) => t.name));
}

export interface EnsureTopicsOptions {
  /**
   * How "not yet" answers are waited out: the service's start-up retry (`StartupRetry#run`).
   * Default: tried again for up to 30 s, without log line.
   */
  retry?: RetryKafka;
}

/**
 * Creates the topics that are missing and waits until each has leaders and answers offset requests;
 * idempotent, and safe when several services race to create the same topic at start-up or the
 * broker is slow to place them.
 */
export async function ensureTopics(
  admin: Admin,
  specs: TopicSpec[],
  options: EnsureTopicsOptions = {},
): Promise<string[]> {
  const retry = options.retry ?? new StartupRetry({ timeoutMs: DEFAULT_ENSURE_TIMEOUT_MS }).run;
  const existing = new Set(await retry('list topics', () => admin.listTopics()));
  const missing = specs.filter((s) => !existing.has(s.topic));
  if (missing.length > 0) {
    const toCreate: ITopicConfig[] = missing.map((s) => ({
      topic: s.topic,
      numPartitions: s.numPartitions,
      replicationFactor: s.replicationFactor,
      ...(s.configEntries && { configEntries: s.configEntries }),
    }));
    await retry('create topics', async () => {
      try {
        await admin.createTopics({ topics: toCreate, waitForLeaders: false });
      } catch (err) {
        // Another service (or an earlier try) created some of them: fine if all now exist.
        const now = new Set(await admin.listTopics());
        if (!missing.every((s) => now.has(s.topic))) throw err;
      }
    });
  }
  const topics = specs.map((s) => s.topic);
  await retry('fetch topic metadata', () => checkLeaders(admin, topics));
  // Metadata can name a leader before that broker serves the partition: ask it for offsets.
  await Promise.all(topics.map((topic) => retry(`list offsets of ${topic}`, () => admin.fetchTopicOffsets(topic))));
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
