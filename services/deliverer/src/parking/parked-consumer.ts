import { ConcurrentConsumer, type ConcurrentConsumerOptions } from '@sluice/kafka';

/** How long a generation of the parked consumer may finish its records before the next one takes over. */
const SWAP_DRAIN_MS = 30_000;

/** What `ParkedConsumer` is built from: a `ConcurrentConsumer`'s options, with the parked topics that exist at start. */
export type ParkedConsumerOptions = ConcurrentConsumerOptions;

/**
 * The one consumer of every parked topic (docs/deliverer.md "Pausing"): one group over the parked
 * topics that exist, whatever the number of destinations. A destination's parked topic is created
 * at its first park, and kafkajs cannot add a topic to a running consumer (a pattern subscription
 * is resolved once, at its start): when a topic is added, the consumer in hand stops taking
 * records, finishes those it has (up to `SWAP_DRAIN_MS`; the rest are read again, uncommitted),
 * commits and leaves, and a new one joins the group over the longer list. Topics added while one
 * change waits are taken in by it. Its holds carry over (`hold`, `release`).
 */
export class ParkedConsumer {
  readonly #options: ParkedConsumerOptions;
  readonly #topics: Set<string>;
  readonly #holds = new Set<string>();
  #current: ConcurrentConsumer | undefined;
  #started = false;
  #stopped = false;
  #swapping: Promise<void> = Promise.resolve();
  #swapPending = false;
  /** A change of generation under way: the parked consumer counts as joined meanwhile (`/readyz`). */
  #inSwap = false;
  /** Resolves when a generation cannot go on, or a new one could not be started. */
  readonly fatal: Promise<Error>;
  #fail: (err: Error) => void = () => undefined;

  constructor(options: ParkedConsumerOptions) {
    this.#options = options;
    this.#topics = new Set(options.topics);
    this.fatal = new Promise((resolve) => (this.#fail = resolve));
  }

  /** The parked topics read (or about to be, once a change is through). */
  get topics(): string[] {
    return [...this.#topics];
  }

  /** Joined to its group and consuming; with no parked topic yet, there is nothing to join. */
  get connected(): boolean {
    return this.#inSwap || (this.#current?.connected ?? true);
  }

  /** Whether a partition has half its slots taken (`ConcurrentConsumer#crowded`). */
  get crowded(): boolean {
    return this.#current?.crowded ?? false;
  }

  async start(): Promise<void> {
    this.#started = true;
    if (this.#topics.size > 0) await this.#startGeneration();
  }

  /** Reads `topic` too, from the next generation on (it exists: created by a park, or found by a listing). */
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
        await old.drain(SWAP_DRAIN_MS);
        await old.close();
        this.#current = undefined;
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
