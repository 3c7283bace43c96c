import type { Destination, SluiceConfig } from '@sluice/config';
import type { DestinationStateView } from '@sluice/destination-state';
import { ensureTopics, retryTransient, type Admin, type ConcurrentConsumer, type RecordSink } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import { parkedTopicName, topicSpecs } from '@sluice/topology';
import type { DeliveryJob } from '../intake/delivery-job.ts';
import { parkedHeaders } from './parked-job.ts';
import type { DelivererMetrics } from '../service/metrics.ts';

export interface ParkingDeps {
  config: () => SluiceConfig;
  view: DestinationStateView;
  sink: RecordSink;
  admin: Admin;
  /** The consumer group of the parked-topic consumer (its committed offsets say what is drained). */
  groupId: string;
  metrics: DelivererMetrics;
  logger: Logger;
  now: () => number;
  /** How often a resumed destination's parked topic is checked for being drained; default 250 ms. */
  checkEveryMs?: number;
}

/** Why a destination's steering is refreshed: at `start` (each destination once), or on a `change` of its state. */
type RefreshMoment = 'start' | 'change';

/**
 * Pausing without loss, in order (docs/reference/destination-states.md, docs/deliverer.md "Pausing"):
 * a destination that is stopped (paused or disabled, or every endpoint of it is) has its events
 * parked on its own parked topic, and its parked topic is not read. Once it is active again its
 * parked topic is read (through the normal delivery path) while the live path keeps parking its
 * events, until the parked topic is drained: every parked record committed by the parked consumer's
 * group, and no park write of this process in flight or started during the check. From then on its
 * events go out directly again, so they leave in arrival order per partition.
 */
export class Parking {
  /** Active destinations whose parked topic may still hold records: the live path parks for them. */
  readonly #draining = new Set<string>();
  /** Stopped destinations, whose parked topic the consumer holds. */
  readonly #held = new Set<string>();
  #heldLagAt = Number.NEGATIVE_INFINITY;
  readonly #writes = new Map<string, number>();
  /** Park writes started per destination (a check is void if one started while it ran). */
  readonly #started = new Map<string, number>();
  #consumer: ConcurrentConsumer | undefined;
  #timer: NodeJS.Timeout | undefined;
  #checking = false;
  #closed = false;
  readonly #stopListening: () => void;
  /** The parked topics that existed at start (`topicSpecs`); others are created before their first park. */
  readonly #topics: Set<string>;
  readonly #creating = new Map<string, Promise<unknown>>();

  private readonly deps: ParkingDeps;
  constructor(deps: ParkingDeps) {
    this.deps = deps;
    this.#stopListening = deps.view.onChange((c) => this.#refresh(c.destinationId));
    const config = deps.config();
    this.#topics = new Set(config.destinations.map((d) => parkedTopicName(config, d.id)));
  }

  /** Starts steering the parked consumer: holds the topics of stopped destinations, drains the others. */
  async start(consumer: ConcurrentConsumer): Promise<void> {
    this.#consumer = consumer;
    // Whatever a destination's state, its parked topic may hold records from before this start.
    for (const d of this.deps.config().destinations) this.#refresh(d.id, 'start');
    // The first check at once: a destination with nothing parked goes out directly from the first event.
    await this.checkDrained();
    this.#timer = setInterval(() => void this.checkDrained(), this.deps.checkEveryMs ?? 250);
    this.#timer.unref();
  }

  /**
   * The parked topics the parked consumer reads: those of the destinations configured at start. A
   * destination added by a reload gets its parked topic at its first park, and its parked events
   * are read after the next start of the deliverer (docs/deliverer.md "Pausing").
   */
  topics(): string[] {
    return [...this.#topics];
  }

  /** Paused or disabled, itself or every one of its endpoints: nothing may be attempted. */
  stopped(destination: Destination): boolean {
    const { view } = this.deps;
    if (view.get(destination.id).state !== 'active') return true;
    return destination.endpoints.every((e) => view.get(destination.id, e.ref).state !== 'active');
  }

  /** Whether a live event for `destination` must be parked (stopped, or its parked topic not drained yet). */
  mustPark(destination: Destination): boolean {
    return this.#draining.has(destination.id) || this.stopped(destination);
  }

  /**
   * The endpoints of `names` not paused or disabled themselves. When every one of them is (a retry
   * naming only a paused endpoint), the destination's active endpoints: the destination's part
   * ends at the first 2xx of any of its endpoints, and the event waits only while all are stopped.
   */
  activeEndpoints(destination: Destination, names: string[]): string[] {
    const { view } = this.deps;
    const stoppedRefs = destination.endpoints.filter((e) => view.get(destination.id, e.ref).state !== 'active');
    if (stoppedRefs.length === 0) return names;
    const left = names.filter((n) => !stoppedRefs.some((e) => e.ref === n || e.url === n));
    if (left.length > 0) return left;
    return destination.endpoints.filter((e) => !stoppedRefs.includes(e)).map((e) => e.ref);
  }

  /** Writes the job to its destination's parked topic; resolves once Kafka acknowledged it. */
  async park(job: DeliveryJob, acceptedAt: number | undefined): Promise<void> {
    const id = job.destinationId;
    const config = this.deps.config();
    this.#writes.set(id, (this.#writes.get(id) ?? 0) + 1);
    this.#started.set(id, (this.#started.get(id) ?? 0) + 1);
    try {
      const topic = parkedTopicName(config, id);
      if (!this.#topics.has(topic)) await this.#create(topic, config);
      await this.deps.sink.send(topic, {
        key: job.key,
        value: job.body,
        headers: parkedHeaders(job, acceptedAt, this.deps.now()),
      });
      this.deps.metrics.parked.inc({ destination: id });
    } finally {
      this.#writes.set(id, (this.#writes.get(id) ?? 1) - 1);
    }
  }

  #create(topic: string, config: SluiceConfig): Promise<unknown> {
    let creating = this.#creating.get(topic);
    if (!creating) {
      const spec = topicSpecs(config).filter((s) => s.topic === topic);
      creating = ensureTopics(this.deps.admin, spec);
      this.#creating.set(topic, creating);
      creating.catch(() => this.#creating.delete(topic));
    }
    return creating;
  }

  /**
   * The config in force changed (a reload, a runtime destination created, changed or deleted): the
   * parked topic of a stopped destination now gone from it is read again, so its parked events are
   * dead-lettered `destination_deleted` (the intake decision, docs/deliverer.md "Intake") rather
   * than kept unread; a destination in it is steered by its state, as at a state change.
   */
  configChanged(): void {
    const consumer = this.#consumer;
    if (!consumer || this.#closed) return;
    const config = this.deps.config();
    const ids = new Set(config.destinations.map((d) => d.id));
    for (const id of [...this.#held]) {
      if (ids.has(id)) continue;
      this.#held.delete(id);
      consumer.release(parkedTopicName(config, id));
      this.deps.logger.info({ destinationId: id }, 'destination gone: its parked events are read and dead-lettered');
    }
    for (const id of ids) this.#refresh(id);
  }

  /** Stops steering (shutdown): the consumer's own intake stop pauses every topic. */
  close(): void {
    this.#closed = true;
    this.#stopListening();
    if (this.#timer) clearInterval(this.#timer);
  }

  #refresh(destinationId: string, moment: RefreshMoment = 'change'): void {
    const starting = moment === 'start';
    const consumer = this.#consumer;
    if (!consumer || this.#closed) return;
    const config = this.deps.config();
    const destination = config.destinations.find((d) => d.id === destinationId);
    if (!destination) return;
    const topic = parkedTopicName(config, destinationId);
    if (this.stopped(destination)) {
      if (!this.#held.has(destinationId))
        this.deps.logger.info({ destinationId }, 'destination stopped: parking its events');
      this.#held.add(destinationId);
      consumer.hold(topic);
      this.#draining.delete(destinationId);
      return;
    }
    if (!this.#held.delete(destinationId) && !starting) return;
    consumer.release(topic);
    this.#draining.add(destinationId);
    if (!starting) this.deps.logger.info({ destinationId }, 'destination active: delivering its parked events');
  }

  /** Ends the draining of every destination whose parked topic is drained (run every `checkEveryMs`). */
  async checkDrained(): Promise<void> {
    if (this.#checking || this.#closed) return;
    this.#checking = true;
    try {
      const config = this.deps.config();
      // The lag of the stopped destinations' parked topics, for the metric (once a second is plenty).
      const now = this.deps.now();
      if (this.#held.size > 0 && now - this.#heldLagAt >= 1_000) {
        this.#heldLagAt = now;
        for (const id of this.#held)
          this.deps.metrics.parkedLag.set({ destination: id }, (await this.#lag(parkedTopicName(config, id))).lag);
      }
      for (const id of [...this.#draining]) {
        if ((this.#writes.get(id) ?? 0) > 0) continue;
        const started = this.#started.get(id) ?? 0;
        const topic = parkedTopicName(config, id);
        const { lag, delivered } = await this.#lag(topic);
        this.deps.metrics.parkedLag.set({ destination: id }, lag);
        if (lag > 0 || (this.#writes.get(id) ?? 0) > 0 || (this.#started.get(id) ?? 0) !== started) continue;
        if (this.#draining.delete(id) && started > 0)
          this.deps.logger.info({ destinationId: id }, 'parked topic drained; delivering directly again');
        if (delivered.length > 0) void this.#trim(topic, delivered);
      }
    } catch (err) {
      this.deps.logger.warn({ err }, 'parked topic lag not read; trying again');
    } finally {
      this.#checking = false;
    }
  }

  /**
   * Deletes the delivered records of a drained parked topic: the topic keeps its records forever
   * (`retention.ms=-1`, so no pause is too long), and this keeps it from growing.
   */
  async #trim(topic: string, partitions: { partition: number; offset: string }[]): Promise<void> {
    try {
      await this.deps.admin.deleteTopicRecords({ topic, partitions });
    } catch (err) {
      this.deps.logger.warn({ err, topic }, 'delivered parked records not deleted; trying at the next drain');
    }
  }

  /**
   * Records of `topic` the parked consumer's group has not committed yet, and per partition the
   * offset below which every record was delivered and is still stored.
   */
  async #lag(topic: string): Promise<{ lag: number; delivered: { partition: number; offset: string }[] }> {
    const { admin, groupId } = this.deps;
    const [ends, committed] = await Promise.all([
      retryTransient(() => admin.fetchTopicOffsets(topic)),
      retryTransient(() => admin.fetchOffsets({ groupId, topics: [topic] })),
    ]);
    const done = new Map<number, number>();
    for (const t of committed) for (const p of t.partitions) done.set(p.partition, Number(p.offset));
    let lag = 0;
    const delivered: { partition: number; offset: string }[] = [];
    for (const p of ends) {
      const low = Number(p.low);
      const from = Math.max(done.get(p.partition) ?? -1, low);
      lag += Math.max(0, Number(p.high) - from);
      if (from > low) delivered.push({ partition: p.partition, offset: String(from) });
    }
    return { lag, delivered };
  }
}
