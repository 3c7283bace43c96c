import { randomBytes } from 'node:crypto';
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

/**
 * The `kafka` section of a config made by `testConfig`, shaped as the config file writes it, for a
 * test that writes a config file for a service process or parses a changed copy again.
 */
export function fileKafka(config: SluiceConfig): Record<string, unknown> {
  const { startupTimeoutMs, ...rest } = config.kafka;
  return { ...rest, startupTimeout: `${startupTimeoutMs}ms` };
}

/**
 * A runtime keyring for services run in the test's own process (docs/reference/runtime-destinations.md,
 * "Encryption"): one random key `k1`, put in the environment variable `variable`; returns the
 * config's `runtimeDestinations` section that names it.
 */
export function testKeyring(variable: string): { keyring: { id: string; key: { env: string } }[] } {
  process.env[variable] = randomBytes(32).toString('hex');
  return { keyring: [{ id: 'k1', key: { env: variable } }] };
}
