import type { Destination, SluiceConfig } from '@sluice/config';
import type { DestinationStateView } from '@sluice/destination-state';
import { ensureTopics, retryTransient, topicOffsets, type Admin, type RecordSink } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import { parkedTopicName, parkedTopicSpec } from '@sluice/topology';
import type { DeliveryJob } from '../intake/delivery-job.ts';
import { parkedHeaders } from './parked-job.ts';
import type { DelivererMetrics } from '../service/metrics.ts';

/** What the parking steers: the one consumer of the parked topics (a `GrowingConsumer`). */
export interface ParkedTopicsConsumer {
  hold(topic: string): void;
  release(topic: string): void;
  /** Reads `topic` too (it exists now). */
  add(topic: string): void;
}

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

/** The lag of a parked topic: records not committed yet, and per partition the offset below which all were delivered. */
interface Lag {
  lag: number;
  delivered: { partition: number; offset: string }[];
}

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
  #consumer: ParkedTopicsConsumer | undefined;
  #timer: NodeJS.Timeout | undefined;
  #checking = false;
  #closed = false;
  readonly #stopListening: () => void;
  /**
   * The parked topics known to exist (`findTopics`, and those this process created): a destination's
   * parked topic is created at its first park, so one without is known to hold nothing.
   */
  readonly #topics = new Set<string>();
  readonly #creating = new Map<string, Promise<unknown>>();
  #finding: Promise<void> | undefined;

  private readonly deps: ParkingDeps;
  constructor(deps: ParkingDeps) {
    this.deps = deps;
    this.#stopListening = deps.view.onChange((c) => this.#refresh(c.destinationId));
  }

  /**
   * Lists the cluster's topics (one request) and takes in the parked topics of the destinations in
   * force, and `also`, that exist and are not known yet (created by another replica, or before this
   * start).
   */
  findTopics(also: string[] = []): Promise<void> {
    const finding = this.#listTopics(this.#finding, also);
    this.#finding = finding;
    const done = () => {
      if (this.#finding === finding) this.#finding = undefined;
    };
    finding.then(done, done);
    return finding;
  }

  async #listTopics(previous: Promise<void> | undefined, also: string[]): Promise<void> {
    await previous?.catch(() => undefined);
    const config = this.deps.config();
    const existing = new Set(await retryTransient(() => this.deps.admin.listTopics()));
    const wanted = [...config.destinations.map((d) => parkedTopicName(config, d.id)), ...also];
    for (const topic of wanted) if (existing.has(topic)) this.#known(topic);
  }

  /** `findTopics` when `topic` is not known, in the background (a failure is logged; the next resume lists again). */
  #findIfUnknown(topic: string): void {
    if (this.#topics.has(topic)) return;
    this.findTopics([topic]).catch((err: unknown) => this.deps.logger.warn({ err }, 'parked topics not listed'));
  }

  #known(topic: string): void {
    if (this.#topics.has(topic)) return;
    this.#topics.add(topic);
    this.#consumer?.add(topic);
  }

  /** Starts steering the parked consumer: holds the topics of stopped destinations, drains the others. */
  async start(consumer: ParkedTopicsConsumer): Promise<void> {
    this.#consumer = consumer;
    for (const topic of this.#topics) consumer.add(topic);
    // Whatever a destination's state, its parked topic may hold records from before this start.
    for (const d of this.deps.config().destinations) this.#refresh(d.id, 'start');
    // The first check at once: a destination with nothing parked goes out directly from the first event.
    await this.checkDrained();
    this.#timer = setInterval(() => void this.checkDrained(), this.deps.checkEveryMs ?? 250);
    this.#timer.unref();
  }

  /**
   * The parked topics to read from the start: those of the destinations in force that exist
   * (`findTopics`). A destination's parked topic is created at its first park, and read from then
   * on (docs/deliverer.md "Pausing").
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
      if (!this.#topics.has(topic)) await this.#create(id, config);
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

  /** Creates the destination's parked topic (its first park), and has the parked consumer read it. */
  #create(destinationId: string, config: SluiceConfig): Promise<unknown> {
    const spec = parkedTopicSpec(config, destinationId);
    const { topic } = spec;
    let creating = this.#creating.get(topic);
    if (!creating) {
      creating = ensureTopics(this.deps.admin, [spec]).then(() => this.#known(topic));
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
      const topic = parkedTopicName(config, id);
      consumer.release(topic);
      // Its events may be on a topic another replica created: read too, to be dead-lettered.
      this.#findIfUnknown(topic);
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
    // Nothing was ever parked for it (at start), or its topic is read once known.
    if (starting && !this.#topics.has(topic)) return;
    consumer.release(topic);
    this.#draining.add(destinationId);
    if (starting) return;
    this.deps.logger.info({ destinationId }, 'destination active: delivering its parked events');
    // Another replica may have parked its events on a topic this one has not seen created.
    this.#findIfUnknown(topic);
  }

  /** Ends the draining of every destination whose parked topic is drained (run every `checkEveryMs`). */
  async checkDrained(): Promise<void> {
    if (this.#checking || this.#closed) return;
    this.#checking = true;
    try {
      const config = this.deps.config();
      // The lag of the stopped destinations' parked topics, for the metric (once a second is plenty).
      const now = this.deps.now();
      const held = this.#held.size > 0 && now - this.#heldLagAt >= 1_000 ? [...this.#held] : [];
      if (held.length > 0) this.#heldLagAt = now;
      const draining = [...this.#draining].filter((id) => (this.#writes.get(id) ?? 0) === 0);
      const started = new Map(draining.map((id) => [id, this.#started.get(id) ?? 0]));
      const lags = await this.#lags([...held, ...draining].map((id) => parkedTopicName(config, id)));
      for (const id of held)
        this.deps.metrics.parkedLag.set({ destination: id }, lags.get(parkedTopicName(config, id))?.lag ?? 0);
      for (const id of draining) {
        const topic = parkedTopicName(config, id);
        // A topic not known while the topics are listed may be one another replica created.
        if (!this.#topics.has(topic) && this.#finding) continue;
        const { lag, delivered } = lags.get(topic) ?? { lag: 0, delivered: [] };
        this.deps.metrics.parkedLag.set({ destination: id }, lag);
        const writes = started.get(id) ?? 0;
        if (lag > 0 || (this.#writes.get(id) ?? 0) > 0 || (this.#started.get(id) ?? 0) !== writes) continue;
        if (this.#draining.delete(id) && writes > 0)
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
   * Per parked topic of `topics` that exists: the records the parked consumer's group has not
   * committed yet, and per partition the offset below which every record was delivered and is still
   * stored. One offsets request per broker and one request of the group's offsets for all of them
   * (`topicOffsets`); a topic not created yet holds nothing and is not asked about.
   */
  async #lags(topics: string[]): Promise<Map<string, Lag>> {
    const { admin, groupId } = this.deps;
    const lags = new Map<string, Lag>();
    const asked = [...new Set(topics)].filter((t) => this.#topics.has(t));
    if (asked.length === 0) return lags;
    const ends = await retryTransient(() => topicOffsets(admin, asked));
    const committed = await retryTransient(() => admin.fetchOffsets({ groupId, topics: asked }));
    const done = new Map<string, number>();
    for (const t of committed) for (const p of t.partitions) done.set(`${p.partition}:${t.topic}`, Number(p.offset));
    for (const [topic, partitions] of ends) {
      let lag = 0;
      const delivered: { partition: number; offset: string }[] = [];
      for (const p of partitions) {
        const low = Number(p.low);
        const from = Math.max(done.get(`${p.partition}:${topic}`) ?? -1, low);
        lag += Math.max(0, Number(p.high) - from);
        if (from > low) delivered.push({ partition: p.partition, offset: String(from) });
      }
      lags.set(topic, { lag, delivered });
    }
    return lags;
  }
}
