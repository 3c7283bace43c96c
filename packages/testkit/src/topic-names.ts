import { DEFAULT_TOPICS, type TopicNames } from '@sluice/config';

/**
 * Every topic of a config (delay tiers' prefix included) under `prefix` instead of `sluice`, so
 * tests and benchmarks sharing one broker never read each other's records.
 */
export function prefixedTopics(prefix: string): TopicNames {
  const entries = Object.entries(DEFAULT_TOPICS).map(([key, name]) => [key, `${prefix}${name.slice('sluice'.length)}`]);
  return Object.fromEntries(entries) as TopicNames;
}
