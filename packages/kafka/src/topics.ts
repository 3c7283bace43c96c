import type { Admin, ITopicConfig } from 'kafkajs';
import { type RetryKafka, StartupRetry } from './startup-retry.ts';
import { topicOffsets } from './topic-offsets.ts';

/** How long `ensureTopics` waits out "not yet" answers when no start-up retry is given. */
const DEFAULT_ENSURE_TIMEOUT_MS = 30_000;

/** A topic `ensureTopics` creates when it is missing: name, partitions, replication, topic configs. */
export interface TopicSpec {
  topic: string;
  numPartitions: number;
  replicationFactor: number;
  configEntries?: { name: string; value: string }[];
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

/**
 * The most metadata records one topic-creation request may make, half of what a KRaft controller
 * takes in one operation (10,000: a larger request fails whole with POLICY_VIOLATION,
 * `BoundedListTooLongException`, creating nothing).
 */
const MAX_RECORDS_PER_CREATE = 5_000;

/** Metadata records the controller writes to create a topic: the topic, one per partition, one per config entry. */
const creationRecords = (s: TopicSpec) => 1 + s.numPartitions + (s.configEntries?.length ?? 0);

/**
 * `specs` split into creation requests of at most `MAX_RECORDS_PER_CREATE` records each (a topic
 * larger than that alone in its request), in order: thousands of topics (a parked topic per
 * destination) are created in several requests rather than refused in one.
 */
function creationRequests(specs: readonly TopicSpec[], maxRecords = MAX_RECORDS_PER_CREATE): TopicSpec[][] {
  const requests: TopicSpec[][] = [];
  let current: TopicSpec[] = [];
  let records = 0;
  for (const spec of specs) {
    const cost = creationRecords(spec);
    if (current.length > 0 && records + cost > maxRecords) {
      requests.push(current);
      current = [];
      records = 0;
    }
    current.push(spec);
    records += cost;
  }
  if (current.length > 0) requests.push(current);
  return requests;
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
 * broker is slow to place them. Many missing topics are created in several requests, each within
 * what the controller takes in one (`MAX_RECORDS_PER_CREATE`).
 */
export async function ensureTopics(
  admin: Admin,
  specs: TopicSpec[],
  options: EnsureTopicsOptions = {},
): Promise<string[]> {
  const retry = options.retry ?? new StartupRetry({ timeoutMs: DEFAULT_ENSURE_TIMEOUT_MS }).run;
  const existing = new Set(await retry('list topics', () => admin.listTopics()));
  const missing = specs.filter((s) => !existing.has(s.topic));
  for (const chunk of creationRequests(missing)) {
    const toCreate: ITopicConfig[] = chunk.map((s) => ({
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
        if (!chunk.every((s) => now.has(s.topic))) throw err;
      }
    });
  }
  const topics = specs.map((s) => s.topic);
  await retry('fetch topic metadata', () => checkLeaders(admin, topics));
  // Metadata can name a leader before that broker serves the partition: ask it for offsets, every
  // topic in one request per broker (`topicOffsets`).
  await retry('list offsets', () => topicOffsets(admin, topics));
  return missing.map((s) => s.topic);
}
