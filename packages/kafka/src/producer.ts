import kafkajs, { type Kafka, type Message, type Producer, type RecordMetadata, type TopicMessages } from 'kafkajs';

const { Partitioners } = kafkajs;

/**
 * The only producer preset in Sluice: idempotent, one request in flight, and every send
 * acknowledged by all in-sync replicas (`acks = -1`), so a resolved send means the records are
 * durably in Kafka (SPEC §3).
 */
export class SafeProducer {
  readonly producer: Producer;
  #connected = false;

  constructor(kafka: Kafka) {
    this.producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      // The murmur2 partitioner of the Java client, so keys land where other Kafka clients put them.
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    this.producer.on(this.producer.events.CONNECT, () => (this.#connected = true));
    this.producer.on(this.producer.events.DISCONNECT, () => (this.#connected = false));
  }

  get connected(): boolean {
    return this.#connected;
  }

  connect(): Promise<void> {
    return this.producer.connect();
  }

  send(topic: string, messages: Message[], timeoutMs?: number): Promise<RecordMetadata[]> {
    return this.producer.send({ topic, messages, acks: -1, ...(timeoutMs !== undefined && { timeout: timeoutMs }) });
  }

  sendBatch(topicMessages: TopicMessages[], timeoutMs?: number): Promise<RecordMetadata[]> {
    return this.producer.sendBatch({ topicMessages, acks: -1, ...(timeoutMs !== undefined && { timeout: timeoutMs }) });
  }

  /** Waits for in-flight sends (kafkajs resolves them before disconnecting) and closes. */
  disconnect(): Promise<void> {
    return this.producer.disconnect();
  }
}
