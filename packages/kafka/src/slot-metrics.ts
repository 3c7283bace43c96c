import { Gauge, type Registry } from 'prom-client';

/** Where one partition of a `ConcurrentConsumer` stands: what its handlers hold, and why it is not read. */
export interface PartitionSlots {
  topic: string;
  partition: number;
  /** Unfinished records whose handler holds a slot. */
  inSlot: number;
  /** Unfinished records whose handler gave its slot back (they hold the commit, not a slot). */
  detached: number;
  /** Fetched records kept to hand out as slots free up (the rest of a batch). */
  kept: number;
  /** Why the partition is not fetched now, if it is not: every slot taken, or its topic held. */
  paused?: 'slots' | 'held';
}

type Source = { groupId: string; read: () => PartitionSlots[] };

const RECORD_LABELS = ['group', 'topic', 'partition', 'state'] as const;
const PAUSE_LABELS = ['group', 'topic', 'partition', 'reason'] as const;

/**
 * `sluice_consumer_records_in_hand` and `sluice_consumer_partition_paused` (docs/reference/observability.md):
 * read from each watched consumer when Prometheus scrapes, so a partition that stopped being read
 * says why (its slots all held, by what; its topic held) instead of showing only a lag that stands.
 * One pair of gauges per registry, shared by every consumer of the process.
 */
export class SlotMetrics {
  static readonly #byRegistry = new WeakMap<Registry, SlotMetrics>();
  readonly #sources: Source[] = [];

  /** The registry's gauges, made on first use. */
  static of(registry: Registry): SlotMetrics {
    let metrics = SlotMetrics.#byRegistry.get(registry);
    if (!metrics) SlotMetrics.#byRegistry.set(registry, (metrics = new SlotMetrics(registry)));
    return metrics;
  }

  private constructor(registry: Registry) {
    const sources = this.#sources;
    new Gauge({
      name: 'sluice_consumer_records_in_hand',
      help: 'Unfinished records of a partition on this member: in a handler slot (in-slot), waiting with their slot given back (detached), or fetched and kept until a slot frees (kept)',
      labelNames: RECORD_LABELS,
      registers: [registry],
      collect() {
        this.reset();
        for (const { groupId, read } of sources)
          for (const p of read()) {
            const labels = { group: groupId, topic: p.topic, partition: String(p.partition) };
            this.set({ ...labels, state: 'in-slot' }, p.inSlot);
            this.set({ ...labels, state: 'detached' }, p.detached);
            this.set({ ...labels, state: 'kept' }, p.kept);
          }
      },
    });
    new Gauge({
      name: 'sluice_consumer_partition_paused',
      help: 'A partition this member does not fetch now (1): every handler slot taken (slots), or its topic held (held)',
      labelNames: PAUSE_LABELS,
      registers: [registry],
      collect() {
        this.reset();
        for (const { groupId, read } of sources)
          for (const p of read())
            if (p.paused)
              this.set({ group: groupId, topic: p.topic, partition: String(p.partition), reason: p.paused }, 1);
      },
    });
  }

  /** Exports `read()`'s partitions under `groupId` at each scrape. */
  watch(groupId: string, read: () => PartitionSlots[]): void {
    this.#sources.push({ groupId, read });
  }
}
