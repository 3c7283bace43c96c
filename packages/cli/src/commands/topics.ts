import { ensureTopics } from '@sluice/kafka';
import { topicSpecs } from '@sluice/topology';
import type { CliIo } from '../io.ts';
import { openKafkaSession } from '../kafka-session.ts';

export interface TopicsOptions {
  config?: string;
  create?: boolean;
  json?: boolean;
}

interface TopicRow {
  topic: string;
  exists: boolean;
  partitions: number | null;
  wantedPartitions: number;
  replicationFactor: number | null;
  config: Record<string, string>;
}

/** `sluice topics [--config F] [--create]`: the config's topics, created when asked, and what the broker has. */
export async function topics(io: CliIo, options: TopicsOptions): Promise<void> {
  const { config, kafka } = openKafkaSession(io, options.config);
  const specs = topicSpecs(config);
  const admin = kafka.admin();
  await admin.connect();
  try {
    if (options.create) {
      const created = await ensureTopics(admin, specs);
      if (!options.json)
        io.stdout(created.length > 0 ? `created ${created.length} topics\n` : 'all topics already exist\n');
    }
    const existing = new Set(await admin.listTopics());
    const present = specs.filter((s) => existing.has(s.topic)).map((s) => s.topic);
    const metadata = present.length > 0 ? (await admin.fetchTopicMetadata({ topics: present })).topics : [];
    const byName = new Map(metadata.map((t) => [t.name, t]));
    const rows: TopicRow[] = specs.map((s) => {
      const meta = byName.get(s.topic);
      return {
        topic: s.topic,
        exists: meta !== undefined,
        partitions: meta ? meta.partitions.length : null,
        wantedPartitions: s.numPartitions,
        replicationFactor: meta ? (meta.partitions[0]?.replicas.length ?? 0) : null,
        config: Object.fromEntries((s.configEntries ?? []).map((e) => [e.name, e.value])),
      };
    });
    if (options.json) {
      io.stdout(`${JSON.stringify(rows, null, 2)}\n`);
      return;
    }
    const width = Math.max(...rows.map((r) => r.topic.length));
    for (const r of rows) {
      const state = r.exists
        ? `${r.partitions} partitions, replication ${r.replicationFactor}`
        : `missing (would be ${r.wantedPartitions} partitions)`;
      const extra = Object.entries(r.config)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ');
      io.stdout(`${r.topic.padEnd(width)}  ${state}${extra ? `  ${extra}` : ''}\n`);
    }
  } finally {
    await admin.disconnect();
  }
}
