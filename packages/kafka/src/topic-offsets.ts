import type { Admin, Kafka } from 'kafkajs';

/** A partition's offsets: the first record still stored (`low`) and the next one to be written (`high`). */
export interface PartitionOffsets {
  partition: number;
  low: string;
  high: string;
}

/** What `topicOffsets` uses of kafkajs's cluster (internal: kafkajs does not expose it on the admin). */
interface AdminCluster {
  addMultipleTargetTopics(topics: string[]): Promise<unknown>;
  refreshMetadataIfNecessary(): Promise<unknown>;
  findTopicPartitionMetadata(topic: string): { partitionId: number }[];
  fetchTopicsOffset(
    topics: { topic: string; fromBeginning: boolean; partitions: { partition: number }[] }[],
  ): Promise<{ topic: string; partitions: { partition: number; offset: string }[] }[]>;
}

const CREATE_CLUSTER = 'private:Kafka:createCluster';
const clusters = new WeakMap<Admin, AdminCluster>();

/**
 * Keeps the cluster of every admin `kafka` makes, for `topicOffsets`. kafkajs builds a cluster
 * per admin and keeps it private; its `admin()` asks one of a private factory, which this wraps
 * while the admin is made. Applied by `createKafka`; without it `topicOffsets` asks topic by topic.
 */
export function rememberAdminClusters(kafka: Kafka): void {
  const holder = kafka as unknown as Record<symbol, (options: object) => AdminCluster>;
  const symbol = Object.getOwnPropertySymbols(kafka).find((s) => s.description === CREATE_CLUSTER);
  const create = symbol && holder[symbol];
  if (!symbol || typeof create !== 'function') return;
  const admin = kafka.admin.bind(kafka);
  kafka.admin = (config) => {
    let made: AdminCluster | undefined;
    holder[symbol] = (options) => (made = create(options));
    try {
      const a = admin(config);
      if (made) clusters.set(a, made);
      return a;
    } finally {
      holder[symbol] = create;
    }
  };
}

/**
 * The low and high offsets of every partition of `topics`, in one metadata request (for the topics
 * the admin did not know yet) and two ListOffsets requests per leader broker. kafkajs's own
 * `fetchTopicOffsets` takes one topic and refreshes the metadata of every topic the admin ever
 * asked about before each: with thousands of topics, thousands of ever larger metadata requests one
 * after the other under one lock (its 30 s timeout ended the start of every service with 10,000
 * runtime destinations, bench/RESULTS.md). An admin not made by `createKafka` is asked topic by topic.
 */
export async function topicOffsets(admin: Admin, topics: readonly string[]): Promise<Map<string, PartitionOffsets[]>> {
  const result = new Map<string, PartitionOffsets[]>();
  if (topics.length === 0) return result;
  const cluster = clusters.get(admin);
  if (!cluster) {
    await Promise.all(
      topics.map(async (topic) => {
        const offsets = await admin.fetchTopicOffsets(topic);
        result.set(
          topic,
          offsets.map(({ partition, low, high }) => ({ partition, low, high })),
        );
      }),
    );
    return result;
  }
  await cluster.addMultipleTargetTopics([...topics]);
  await cluster.refreshMetadataIfNecessary();
  const request = (fromBeginning: boolean) =>
    topics.map((topic) => ({
      topic,
      fromBeginning,
      partitions: cluster.findTopicPartitionMetadata(topic).map((p) => ({ partition: p.partitionId })),
    }));
  const [highs, lows] = await Promise.all([
    cluster.fetchTopicsOffset(request(false)),
    cluster.fetchTopicsOffset(request(true)),
  ]);
  const low = new Map<string, string>();
  for (const t of lows) for (const p of t.partitions) low.set(`${p.partition}:${t.topic}`, p.offset);
  for (const t of highs)
    result.set(
      t.topic,
      t.partitions.map((p) => ({
        partition: p.partition,
        high: p.offset,
        low: low.get(`${p.partition}:${t.topic}`) ?? '0',
      })),
    );
  for (const topic of topics) if (!result.has(topic)) result.set(topic, []);
  return result;
}
