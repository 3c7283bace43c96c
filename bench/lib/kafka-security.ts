import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { parseConfig, type KafkaSecurity } from '@sluice/config';
import { prefixedTopics } from '@sluice/testkit';

export interface BenchKafkaSecurity {
  /** `kafka.ssl` / `kafka.sasl` as written (`{ env }` secrets kept), for the config files a benchmark writes. */
  raw: { ssl?: unknown; sasl?: unknown };
  /** The same, validated and resolved, for the benchmark's own clients. */
  security: KafkaSecurity;
}

/**
 * Kafka TLS/SASL for a benchmark run against a secured cluster: taken from the config file named
 * by `SLUICE_CONFIG` (the file the services would run with; docs/configuration.md, "Kafka
 * security"). Without `SLUICE_CONFIG`: plaintext, no authentication.
 */
export function benchKafkaSecurity(env: NodeJS.ProcessEnv = process.env): BenchKafkaSecurity {
  if (!env.SLUICE_CONFIG) return { raw: {}, security: {} };
  const file = parse(readFileSync(env.SLUICE_CONFIG, 'utf8')) as { kafka?: { ssl?: unknown; sasl?: unknown } } | null;
  const raw = {
    ...(file?.kafka?.ssl !== undefined && { ssl: file.kafka.ssl }),
    ...(file?.kafka?.sasl !== undefined && { sasl: file.kafka.sasl }),
  };
  const { ssl, sasl } = parseConfig({ kafka: raw }, env).kafka;
  return { raw, security: { ...(ssl && { ssl }), ...(sasl && { sasl }) } };
}

/** The `kafka` section of a config file a benchmark writes: its own topics and client id, one replica, TLS/SASL as above. */
export function benchKafkaSection(prefix: string, partitions: number): Record<string, unknown> {
  return {
    ...benchKafkaSecurity().raw,
    clientId: prefix,
    partitions,
    replicationFactor: 1,
    topics: prefixedTopics(prefix),
  };
}
