import kafkajs, { type Kafka, type Message, type Producer, type RecordMetadata, type TopicMessages } from 'kafkajs';

const { Partitioners } = kafkajs;

/**
 * The only producer preset in Sluice: idempotent, one request in flight, and every send
 * acknowledged by all in-sync replicas (`acks = -1`), so a resolved send means the records are
 * durably in Kafka (docs/reference/tracking-api.md).
 *
 * Two rules close a data-loss hole in kafkajs's idempotent producer. When a produce request fails
 * ambiguously (the broker may have written the batch, e.g. it stopped before answering), kafkajs
 * rolls the partition's sequence number back; the NEXT batch then reuses those sequence numbers, the
 * broker takes it for a duplicate of the batch it did write, and acknowledges it without writing
 * it. So: (1) sends go one at a time, so no batch picks up a rolled-back sequence while another is
 * in flight; (2) after any failed send the kafkajs producer is replaced, and the next send gets a
 * new producer id and a fresh sequence space. Retrying a failed send may then duplicate records
 * (at-least-once, de-duplicable by `messageId`), never drop them.
 */
export class SafeProducer {
  #producer: Producer;
  #connected = false;
  #wantConnected = false;
  #queue: Promise<unknown> = Promise.resolve();
  readonly #listeners: ((connected: boolean) => void)[] = [];

  private readonly kafka: Kafka;
  constructor(kafka: Kafka) {
    this.kafka = kafka;
    this.#producer = this.#create();
  }

  #create(): Producer {
    const producer = this.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      // The murmur2 partitioner of the Java client, so keys land where other Kafka clients put them.
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    producer.on(producer.events.CONNECT, () => this.#setConnected(producer, true));
    producer.on(producer.events.DISCONNECT, () => this.#setConnected(producer, false));
    return producer;
  }

  #setConnected(producer: Producer, connected: boolean): void {
    if (producer !== this.#producer) return;
    this.#connected = connected;
    this.#listeners.forEach((l) => l(connected));
  }

  get connected(): boolean {
    return this.#connected;
  }

  /** Called whenever the connection state changes (for readiness). */
  onConnectionChange(listener: (connected: boolean) => void): void {
    this.#listeners.push(listener);
  }

  async connect(): Promise<void> {
    this.#wantConnected = true;
    await this.#producer.connect();
  }

  send(topic: string, messages: Message[], timeoutMs?: number): Promise<RecordMetadata[]> {
    return this.#serialised((p) =>
      p.send({ topic, messages, acks: -1, ...(timeoutMs !== undefined && { timeout: timeoutMs }) }),
    );
  }

  sendBatch(topicMessages: TopicMessages[], timeoutMs?: number): Promise<RecordMetadata[]> {
    return this.#serialised((p) =>
      p.sendBatch({ topicMessages, acks: -1, ...(timeoutMs !== undefined && { timeout: timeoutMs }) }),
    );
  }

  #serialised<T>(op: (producer: Producer) => Promise<T>): Promise<T> {
    const run = this.#queue.then(async () => {
      if (!this.#connected && this.#wantConnected) await this.#producer.connect();
      try {
        return await op(this.#producer);
      } catch (err) {
        await this.#replace();
        throw err;
      }
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Drops the producer whose sequence numbers may be rolled back; the next send uses a new one. */
  async #replace(): Promise<void> {
    const old = this.#producer;
    this.#producer = this.#create();
    this.#setConnected(this.#producer, false);
    await old.disconnect().catch(() => undefined);
  }

  /** Waits for queued and in-flight sends, then closes. */
  async disconnect(): Promise<void> {
    this.#wantConnected = false;
    await this.#queue;
    await this.#producer.disconnect();
  }
}
