import type { Message, SafeProducer } from '@sluice/kafka';

type TopicMessages = Parameters<SafeProducer['sendBatch']>[0][number];

interface Pending {
  topic: string;
  message: Message;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * Coalesces concurrent sends into one `sendBatch`: the first send goes out at once; sends made
 * while it is in flight wait for it and then leave together. At low load nothing waits; under
 * load, one acknowledged request carries many records (the idempotent producer allows only one
 * request in flight, so separate sends would queue anyway). Each caller's promise resolves when
 * its own record is acknowledged (acks = -1).
 */
export class BatchingSink {
  #queue: Pending[] = [];
  #flushing = false;

  constructor(private readonly producer: SafeProducer) {}

  send(topic: string, message: Message): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ topic, message, resolve, reject });
      if (!this.#flushing) void this.#flush();
    });
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0);
        const byTopic = new Map<string, Message[]>();
        for (const p of batch) {
          const list = byTopic.get(p.topic) ?? [];
          list.push(p.message);
          byTopic.set(p.topic, list);
        }
        const topicMessages: TopicMessages[] = [...byTopic].map(([topic, messages]) => ({ topic, messages }));
        try {
          await this.producer.sendBatch(topicMessages);
          batch.forEach((p) => p.resolve());
        } catch (err) {
          batch.forEach((p) => p.reject(err as Error));
        }
      }
    } finally {
      this.#flushing = false;
    }
  }
}
