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
 * The waiting topics (docs/reference/ordering.md, "Topics"): a destination's is created the first
 * time one of its users' events must wait, not at start, so 10,000 ordered destinations are not
 * 10,000 topics. Those that exist are found by listing the cluster's topics by the waiting prefix
 * (at start, and whenever the events group is assigned anew: another replica may have created
 * one), whatever their destination is now — ordered, no longer ordered or gone — so records left
 * waiting always drain. Every one known is read by the events consumer from then on.
 */
export class WaitingTopics {
  readonly #known = new Set<string>();
  readonly #creating = new Map<string, Promise<void>>();
  #reader: WaitingTopicsReader | undefined;
  #finding: Promise<void> | undefined;
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

  /** Has `reader` read every waiting topic known now, and each one known from then on. */
  readBy(reader: WaitingTopicsReader): void {
    this.#reader = reader;
    for (const topic of this.#known) reader.add(topic);
  }

  /**
   * The waiting topic of `destinationId`, once it exists: created at the first wait of one of its
   * users (one creation at a time per topic; a failed one is tried again by the next wait).
   */
  async ensure(destinationId: string): Promise<string> {
    const config = this.#deps.config();
    const topic = waitingTopicName(config, destinationId);
    if (this.#known.has(topic)) return topic;
    let creating = this.#creating.get(topic);
    if (!creating) {
      creating = ensureTopics(this.#deps.admin, [waitingTopicSpec(config, destinationId)]).then((created) => {
        if (created.length > 0)
          this.#deps.logger.info({ destinationId, topic }, 'waiting topic created at a first wait');
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
