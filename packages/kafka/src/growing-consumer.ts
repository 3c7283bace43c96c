import { ConcurrentConsumer, type ConcurrentConsumerOptions } from './concurrent-consumer.ts';

/** How long a generation may finish its records before the next one takes over, unless told otherwise. */
const SWAP_DRAIN_MS = 30_000;

/** What a `GrowingConsumer` is built from: a `ConcurrentConsumer`'s options, with the topics read from its start. */
export interface GrowingConsumerOptions extends ConcurrentConsumerOptions {
  /**
   * How long the generation in hand may finish its records when a topic is added; default 30 s.
   * What is still unfinished then is read again (uncommitted) by the next generation, while its
   * handler runs on.
   */
  swapDrainMs?: number;
}

/**
 * A `ConcurrentConsumer` whose topic list grows: topics created while it runs (a destination's
 * parked topic at its first park, its waiting topic when the destination is ordered) are read from then on.
 * kafkajs cannot add a topic to a running consumer (a pattern subscription is resolved once, at its
 * start): when a topic is added, the consumer in hand (a generation) stops taking records, finishes
 * those it has (up to `swapDrainMs`), commits and leaves its group, and a new one joins the group
 * over the longer list. Topics added while one change waits are taken in by it. Its holds carry
 * over (`hold`, `release`). A generation that leaves owns no partition: `onAssigned` is told so
 * (an empty assignment) before the next one joins and is told its own.
 */
export class GrowingConsumer {
  readonly #options: GrowingConsumerOptions;
  readonly #topics: Set<string>;
  readonly #holds = new Set<string>();
  #current: ConcurrentConsumer | undefined;
  #started = false;
  #stopped = false;
  #swapping: Promise<void> = Promise.resolve();
  #swapPending = false;
  /** A change of generation under way: the consumer counts as joined meanwhile (`/readyz`). */
  #inSwap = false;
  /** Resolves when a generation cannot go on, or a new one could not be started. */
  readonly fatal: Promise<Error>;
  #fail: (err: Error) => void = () => undefined;

  constructor(options: GrowingConsumerOptions) {
    this.#options = options;
    this.#topics = new Set(options.topics);
    this.fatal = new Promise((resolve) => (this.#fail = resolve));
  }

  /** The topics read (or about to be, once a change is through). */
  get topics(): string[] {
    return [...this.#topics];
  }

  /** Joined to its group and consuming; with no topic yet, there is nothing to join. */
  get connected(): boolean {
    return this.#inSwap || (this.#current?.connected ?? true);
  }

  /** Whether a partition has half its slots taken (`ConcurrentConsumer#crowded`). */
  get crowded(): boolean {
    return this.#current?.crowded ?? false;
  }

  /**
   * Starts the first generation (with no topic yet, none). A topic added while it starts is taken
   * in by a change that waits for that start to finish: a generation is never stopped mid-join.
   */
  async start(): Promise<void> {
    this.#started = true;
    if (this.#topics.size === 0) return;
    const first = this.#swapping.then(() => this.#startGeneration());
    this.#swapping = first.catch(() => undefined);
    await first;
  }

  /** Reads `topic` too, from the next generation on (it exists: created, or found by a listing). */
  add(topic: string): void {
    if (this.#topics.has(topic)) return;
    this.#topics.add(topic);
    if (!this.#started || this.#stopped || this.#swapPending) return;
    this.#swapPending = true;
    this.#swapping = this.#swapping
      .then(() => {
        this.#swapPending = false;
        return this.#swap();
      })
      .catch((err: unknown) => this.#fail(err instanceof Error ? err : new Error(String(err))));
  }

  /** Stops reading `topic` until `release` (kept across generations). */
  hold(topic: string): void {
    this.#holds.add(topic);
    this.#current?.hold(topic);
  }

  /** Reads `topic` again. */
  release(topic: string): void {
    this.#holds.delete(topic);
    this.#current?.release(topic);
  }

  stopIntake(): void {
    this.#stopped = true;
    this.#current?.stopIntake();
  }

  async drain(timeoutMs: number): Promise<boolean> {
    await this.#swapping;
    return this.#current?.drain(timeoutMs) ?? true;
  }

  async close(): Promise<void> {
    await this.#swapping;
    await this.#current?.close();
  }

  async #swap(): Promise<void> {
    const old = this.#current;
    if (this.#stopped) return;
    this.#inSwap = true;
    try {
      if (old) {
        old.stopIntake();
        await old.drain(this.#options.swapDrainMs ?? SWAP_DRAIN_MS);
        await old.close();
        this.#current = undefined;
        this.#options.onAssigned?.({});
      }
      if (!this.#stopped) await this.#startGeneration();
    } finally {
      this.#inSwap = false;
    }
  }

  async #startGeneration(): Promise<void> {
    const consumer = new ConcurrentConsumer({ ...this.#options, topics: [...this.#topics] });
    for (const topic of this.#holds) consumer.hold(topic);
    this.#current = consumer;
    void consumer.fatal.then((err) => this.#fail(err));
    await consumer.start();
  }
}
