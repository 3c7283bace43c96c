import { createRequire } from 'node:module';

/**
 * kafkajs 2.2.4 looks a topic up in its cluster metadata by scanning the metadata's topic list:
 * `Cluster#findTopicPartitionMetadata` (`topicMetadata.find`) and the check of
 * `BrokerPool#refreshMetadataIfNecessary` (`every` target topic `some` metadata topic). A client
 * that knows T topics so pays T comparisons per lookup, and T² per check; a consumer runs the check
 * and one lookup per subscribed topic (twice) on every fetch, and an admin runs the check on every
 * per-topic call. With a parked topic per destination that is quadratic in the destinations: 3,000
 * of them, 9 million comparisons per fetch of the deliverer's parked consumer, over and over,
 * whether or not anything is parked.
 *
 * `fixTopicMetadataLookups` makes both look the topic up in a map of the metadata's topics, built
 * once per metadata answer (kafkajs replaces the metadata object on every refresh, never changes
 * it in place): the same answers, each lookup O(1). kafkajs is unmaintained, so the fix is applied
 * here, once per process, by `createKafka`; its test fails if kafkajs no longer has this shape.
 */

interface TopicMetadata {
  topic: string;
  partitionMetadata: unknown[];
}

interface Metadata {
  topicMetadata?: TopicMetadata[];
}

interface BrokerPoolShape {
  metadata: Metadata | null;
  metadataExpireAt: number | null;
  refreshMetadata(topics: string[]): Promise<unknown>;
  refreshMetadataIfNecessary(topics: string[]): Promise<unknown>;
}

interface ClusterShape {
  brokerPool: BrokerPoolShape;
  findTopicPartitionMetadata(topic: string): unknown[];
}

const FIXED = Symbol.for('sluice.kafkajs.topicMetadataLookupsFixed');

const require = createRequire(import.meta.url);

/** kafkajs's Cluster and BrokerPool classes (internal modules: kafkajs has no `exports` map). */
export function clusterClasses(): {
  Cluster: { prototype: ClusterShape };
  BrokerPool: { prototype: BrokerPoolShape } & (new (options: object) => BrokerPoolShape);
} {
  return {
    Cluster: require('kafkajs/src/cluster/index.js'),
    BrokerPool: require('kafkajs/src/cluster/brokerPool.js'),
  };
}

/** The metadata's topics by name (the first of a name, as `find` gives it), built once per topic list. */
const indexes = new WeakMap<TopicMetadata[], Map<string, TopicMetadata>>();
function topicIndex(list: TopicMetadata[]): Map<string, TopicMetadata> {
  let index = indexes.get(list);
  if (!index) {
    index = new Map();
    for (const t of list) if (!index.has(t.topic)) index.set(t.topic, t);
    indexes.set(list, index);
  }
  return index;
}

/** Applies the fix to kafkajs's Cluster and BrokerPool; idempotent. Returns whether the fix is in place. */
export function fixTopicMetadataLookups(): boolean {
  const { Cluster, BrokerPool } = clusterClasses();
  const cluster = Cluster.prototype as ClusterShape & { [FIXED]?: true };
  if (cluster[FIXED]) return true;
  const find = cluster.findTopicPartitionMetadata;
  const pool = BrokerPool.prototype;
  const ifNecessary = pool.refreshMetadataIfNecessary;
  if (typeof find !== 'function' || typeof ifNecessary !== 'function') return false;
  cluster.findTopicPartitionMetadata = function (this: ClusterShape, topic: string) {
    const list = this.brokerPool.metadata?.topicMetadata;
    // No metadata yet: kafkajs's own answer (it throws KafkaJSTopicMetadataNotLoaded).
    if (!list) return find.call(this, topic);
    return topicIndex(list).get(topic)?.partitionMetadata ?? [];
  };
  pool.refreshMetadataIfNecessary = async function (this: BrokerPoolShape, topics: string[]) {
    const list = this.metadata?.topicMetadata;
    // No metadata yet: kafkajs's own check (it refreshes).
    if (!list) return ifNecessary.call(this, topics);
    const shouldRefresh =
      this.metadataExpireAt == null ||
      Date.now() > this.metadataExpireAt ||
      !topics.every((topic) => topicIndex(list).has(topic));
    if (shouldRefresh) return this.refreshMetadata(topics);
    return undefined;
  };
  cluster[FIXED] = true;
  return true;
}
