import { parseConfig, type SluiceConfig } from '@sluice/config';
import { uniqueName } from './names.ts';
import { prefixedTopics } from './topic-names.ts';

/**
 * A validated config whose topics all live under a fresh prefix, so tests sharing one broker
 * never see each other's records. `raw` is config-file shaped (as a user would write it).
 */
export function testConfig(raw: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}): SluiceConfig {
  const prefix = uniqueName('sluice');
  const kafka = (raw.kafka ?? {}) as Record<string, unknown>;
  const topics = { ...prefixedTopics(prefix), ...((kafka.topics ?? {}) as Record<string, string>) };
  return parseConfig(
    { ...raw, kafka: { partitions: 2, replicationFactor: 1, clientId: prefix, ...kafka, topics } },
    env,
  );
}
