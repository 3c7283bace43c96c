import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prefixedTopics, uniqueName } from '@sluice/testkit';

/**
 * A config file (as a user writes it) on fresh topic names, so tests sharing one broker never
 * see each other's records. `raw` is merged over a one-source, no-destination base.
 */
export function writeUniqueConfig(
  dir: string,
  raw: Record<string, unknown> = {},
): { path: string; prefix: string; raw: Record<string, unknown> } {
  const prefix = uniqueName('ops');
  const topics = prefixedTopics(prefix);
  const config = {
    sources: [{ id: 'demo', name: 'Demo source', writeKeys: [`wk-${prefix}`] }],
    ...raw,
    kafka: {
      clientId: prefix,
      partitions: 2,
      replicationFactor: 1,
      topics,
      ...((raw.kafka as object | undefined) ?? {}),
    },
    delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] }, ...((raw.delivery as object | undefined) ?? {}) },
  };
  const path = join(dir, `${prefix}.json`);
  writeFileSync(path, JSON.stringify(config, null, 2));
  return { path, prefix, raw: config };
}
