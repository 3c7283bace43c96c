import type { Admin, Consumer } from 'kafkajs';
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '@sluice/logging';
import { SlotMetrics, type PartitionSlots } from './slot-metrics.ts';
import { topicOffsets } from './topic-offsets.ts';

/**
 * `sluice_consumer_lag`: the consumers whose lag means "not keeping up" (deliverer, retry intake,
 * audience-sync). `sluice_retry_backlog`: the delay tiers, where records wait on purpose until due.
 */
export type LagMetricName = 'sluice_consumer_lag' | 'sluice_retry_backlog';

const LABELS = ['topic', 'partition', 'group'] as const;

/** Default interval between two reads of committed and log-end offsets. */
export const DEFAULT_LAG_INTERVAL_MS = 10_000;

export interface ConsumerMetricsOptions {
  /** The admin client that reads committed and log-end offsets (the service's own). */
  admin: Admin;
  /** Default `sluice_consumer_lag`. */
  metric?: LagMetricName;
  /** Default DEFAULT_LAG_INTERVAL_MS. */
  intervalMs?: number;
  logger?: Logger;
}

interface Watched {
  groupId: string;
  /** Partitions this member owns (empty while rebalancing, crashed or stopped). */
  assignment: Map<string, number[]>;
  /** Label sets exported now, `topic/partition`. */
  exported: Set<string>;
  polling: boolean;
  timer: NodeJS.Timeout;
}

/**
 * Consumer lag per partition (docs/reference/observability.md): the group's committed offset
 * against the partition's log end, read from Kafka's admin API on an interval, so it keeps moving
 * when no record arrives (a stalled or stopped consumer). A member exports only the partitions
 * it owns: their series go when a rebalance starts or the consumer stops, and come back for the
 * partitions the next assignment gives it.
 */
export class ConsumerMetrics {
  readonly lag: Gauge<'topic' | 'partition' | 'group'>;
  readonly #options: ConsumerMetricsOptions;
  readonly #watched: Watched[] = [];
  readonly #registry: Registry;

  constructor(registry: Registry, options: ConsumerMetricsOptions) {
    this.#options = options;
    this.#registry = registry;
    const name = options.metric ?? 'sluice_consumer_lag';
    const existing = registry.getSingleMetric(name) as Gauge<'topic' | 'partition' | 'group'> | undefined;
    const registers = [registry];
    this.lag =
      existing ??
      (name === 'sluice_retry_backlog'
        ? new Gauge({
            name: 'sluice_retry_backlog',
            help: "Records waiting in a delay tier (log end minus the tier group's committed offset), on this member's partitions",
            labelNames: LABELS,
            registers,
          })
        : new Gauge({
            name: 'sluice_consumer_lag',
            help: "Records between the group's committed offset and the partition's log end, on this member's partitions",
            labelNames: LABELS,
            registers,
          }));
  }

  /**
   * Follows `consumer`'s assignment and exports its lag every interval until `close()`, or until
   * the function it returns is called (the consumer closed for good: its interval and series go).
   */
  watch(groupId: string, consumer: Consumer): () => void {
    const intervalMs = this.#options.intervalMs ?? DEFAULT_LAG_INTERVAL_MS;
    const watched: Watched = { groupId, assignment: new Map(), exported: new Set(), polling: false, timer: undefined! };
    watched.timer = setInterval(() => void this.#poll(watched), intervalMs);
    watched.timer.unref();
    this.#watched.push(watched);
    const revoke = () => {
      watched.assignment = new Map();
      this.#removeUnowned(watched);
    };
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      watched.assignment = new Map(Object.entries(event.payload.memberAssignment));
      this.#removeUnowned(watched);
      void this.#poll(watched);
    });
    consumer.on(consumer.events.REBALANCING, revoke);
    consumer.on(consumer.events.CRASH, revoke);
    consumer.on(consumer.events.STOP, revoke);
    consumer.on(consumer.events.DISCONNECT, revoke);
    return () => {
      clearInterval(watched.timer);
      revoke();
      const at = this.#watched.indexOf(watched);
      if (at >= 0) this.#watched.splice(at, 1);
    };
  }

  /** Exports what a consumer's handlers hold per partition, and why a partition is paused (`SlotMetrics`). */
  watchSlots(groupId: string, read: () => PartitionSlots[]): void {
    SlotMetrics.of(this.#registry).watch(groupId, read);
  }

  /** Reads the offsets of every watched group now (tests; the interval does it otherwise). */
  async pollNow(): Promise<void> {
    await Promise.all(this.#watched.map((w) => this.#poll(w)));
  }

  /** Stops the intervals and removes every series this instance exported. */
  close(): void {
    for (const watched of this.#watched) {
      clearInterval(watched.timer);
      watched.assignment = new Map();
      this.#removeUnowned(watched);
    }
  }

  #removeUnowned(watched: Watched): void {
    for (const key of watched.exported) {
      const [topic, partition] = splitKey(key);
      if (!watched.assignment.get(topic)?.includes(partition)) {
        this.lag.remove({ group: watched.groupId, topic, partition: String(partition) });
        watched.exported.delete(key);
      }
    }
  }

  async #poll(watched: Watched): Promise<void> {
    if (watched.polling || watched.assignment.size === 0) return;
    watched.polling = true;
    const { admin } = this.#options;
    try {
      const topics = [...watched.assignment.keys()];
      // Every topic's offsets in one request per broker first: the group's offsets then need no metadata refresh.
      const ends = await topicOffsets(admin, topics);
      const committed = await admin.fetchOffsets({ groupId: watched.groupId, topics });
      const committedAt = new Map<string, number>();
      for (const t of committed)
        for (const p of t.partitions) committedAt.set(key(t.topic, p.partition), Number(p.offset));
      const logEnds = new Map<string, { high: number; low: number }>();
      for (const [topic, partitions] of ends) {
        for (const p of partitions) logEnds.set(key(topic, p.partition), { high: Number(p.high), low: Number(p.low) });
      }
      // The assignment may have changed while the offsets were read: export only what is owned now.
      for (const [topic, partitions] of watched.assignment) {
        for (const partition of partitions) {
          const end = logEnds.get(key(topic, partition));
          if (!end) continue;
          const at = committedAt.get(key(topic, partition)) ?? -1;
          // No committed offset yet: everything still on the partition is ahead of the group.
          const lag = Math.max(0, end.high - (at >= 0 ? at : end.low));
          this.lag.set({ group: watched.groupId, topic, partition: String(partition) }, lag);
          watched.exported.add(key(topic, partition));
        }
      }
    } catch (err) {
      this.#options.logger?.debug({ err, groupId: watched.groupId }, 'consumer lag not read this interval');
    } finally {
      watched.polling = false;
    }
  }
}

function key(topic: string, partition: number): string {
  return `${topic}/${partition}`;
}

function splitKey(k: string): [string, number] {
  const at = k.lastIndexOf('/');
  return [k.slice(0, at), Number(k.slice(at + 1))];
}
