import type { SluiceConfig } from '@sluice/config';
import { ensureTopics, retryTransient, type Admin } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import { isWaitingTopic, waitingTopicName, waitingTopicSpec } from '@sluice/topology';

/** What reads the waiting topics (the events consumer, `GrowingConsumer`): told of each one that exists. */
export interface WaitingTopicsReader {
  add(topic: string): void;
}

export interface WaitingTopicsDeps {
  config: () => SluiceConfig;
  admin: Admin;
  logger: Logger;
}

/**
 * The waiting topics (docs/reference/ordering.md, "Topics"): one per destination with per-user
 * order, created when it is ordered — at start for those ordered then, before the events group
 * joins, and as soon as a reload or a runtime change orders one — never for a destination without
 * order, so 10,000 destinations are not 10,000 topics. Creating one while the deliverer runs makes
 * the events group read it from then on (a new generation of the group: a short pause of delivery),
 * so that pause comes with the change that orders a destination, never at the moment its first
 * event has to wait behind a failing one. A wait that finds no topic yet (its change not yet taken
 * in) creates it itself. Those that exist are found by listing the cluster's topics by the waiting
 * prefix (at start, and whenever the events group is assigned anew: another replica may have
 * created one), whatever their destination is now — ordered, no longer ordered or gone — so
 * records left waiting always drain. Every one known is read by the events consumer from then on.
 */
export class WaitingTopics {
  readonly #known = new Set<string>();
  readonly #creating = new Map<string, Promise<void>>();
  #reader: WaitingTopicsReader | undefined;
  #finding: Promise<void> | undefined;
  /** The ordered destinations' topics being created, and whether a change came meanwhile. */
  #ordering: Promise<void> | undefined;
  #orderingAgain = false;
  readonly #deps: WaitingTopicsDeps;
  constructor(deps: WaitingTopicsDeps) {
    this.#deps = deps;
  }

  /** The waiting topics known to exist. */
  names(): string[] {
    return [...this.#known];
  }

  /** Lists the cluster's topics (one request) and takes in the waiting topics not known yet. */
  async find(): Promise<void> {
    const topics = await retryTransient(() => this.#deps.admin.listTopics());
    for (const topic of topics) if (isWaitingTopic(this.#deps.config(), topic)) this.#take(topic);
  }

  /** `find` in the background, one at a time (a failure is logged: the next assignment lists again). */
  findSoon(): void {
    if (this.#finding) return;
    this.#finding = this.find()
      .catch((err: unknown) => this.#deps.logger.warn({ err }, 'waiting topics not listed'))
      .finally(() => (this.#finding = undefined));
  }

  /**
   * Creates the waiting topics of the destinations ordered in the config in force that have none
   * yet (one request for all of them; `ensureTopics`) and takes them in.
   */
  async createOrdered(): Promise<void> {
    const config = this.#deps.config();
    const missing = config.destinations
      .filter((d) => d.ordering !== undefined && !this.#known.has(waitingTopicName(config, d.id)))
      .map((d) => waitingTopicSpec(config, d.id));
    if (missing.length === 0) return;
    const created = await ensureTopics(this.#deps.admin, missing);
    if (created.length > 0)
      this.#deps.logger.info({ topics: created }, 'waiting topics created for ordered destinations');
    for (const spec of missing) this.#take(spec.topic);
  }

  /** `createOrdered` in the background after a change of the config, one run at a time (a failure is logged). */
  createOrderedSoon(): void {
    if (this.#ordering) {
      this.#orderingAgain = true;
      return;
    }
    this.#ordering = this.createOrdered()
      .catch((err: unknown) => this.#deps.logger.warn({ err }, 'waiting topics of ordered destinations not created'))
      .finally(() => {
        this.#ordering = undefined;
        if (!this.#orderingAgain) return;
        this.#orderingAgain = false;
        this.createOrderedSoon();
      });
  }

  /** Has `reader` read every waiting topic known now, and each one known from then on. */
  readBy(reader: WaitingTopicsReader): void {
    this.#reader = reader;
    for (const topic of this.#known) reader.add(topic);
  }

  /**
   * The waiting topic of `destinationId`, once it exists: created here when a wait comes before
   * the change that ordered its destination was taken in (one creation at a time per topic; a
   * failed one is tried again by the next wait).
   */
  async ensure(destinationId: string): Promise<string> {
    const config = this.#deps.config();
    const topic = waitingTopicName(config, destinationId);
    if (this.#known.has(topic)) return topic;
    let creating = this.#creating.get(topic);
    if (!creating) {
      creating = ensureTopics(this.#deps.admin, [waitingTopicSpec(config, destinationId)]).then((created) => {
        if (created.length > 0) this.#deps.logger.info({ destinationId, topic }, 'waiting topic created by a wait');
        this.#take(topic);
      });
      this.#creating.set(topic, creating);
      const forget = () => this.#creating.delete(topic);
      creating.then(forget, forget);
    }
    await creating;
    return topic;
  }

  #take(topic: string): void {
    if (this.#known.has(topic)) return;
    this.#known.add(topic);
    this.#reader?.add(topic);
  }
}
