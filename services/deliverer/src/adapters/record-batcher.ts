import type { Message } from 'kafkajs';
import type { BatchProducer } from '@sluice/kafka';
import { PRODUCE_LINGER_MS, PRODUCE_MAX_BATCH } from '../constants.ts';

/** Where the deliverer writes its side records (attempts, retries, dead letters, rejects). */
export interface RecordSink {
  /** Resolves once the record is acknowledged by Kafka (acks = -1). */
  send(topic: string, message: Message): Promise<void>;
}

interface Pending {
  topic: string;
  message: Message;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * Gathers records from many concurrent handlers for a couple of milliseconds and writes them in
 * one `sendBatch` (idempotent `SafeProducer`, one request in flight), so thousands of
 * deliveries a second do not each pay a Kafka round trip. Each caller still waits for its own
 * record's acknowledgement before its offset can be committed.
 */
export class RecordBatcher implements RecordSink {
  #pending: Pending[] = [];
  #timer: NodeJS.Timeout | undefined;
  #sending = false;

  constructor(
    private readonly producer: BatchProducer,
    private readonly lingerMs = PRODUCE_LINGER_MS,
    private readonly maxBatch = PRODUCE_MAX_BATCH,
  ) {}

  send(topic: string, message: Message): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ topic, message, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#sending || this.#timer) return;
    if (this.#pending.length >= this.maxBatch) {
      void this.#flush();
      return;
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#flush();
    }, this.lingerMs);
  }

  async #flush(): Promise<void> {
    if (this.#sending || this.#pending.length === 0) return;
    this.#sending = true;
    const batch = this.#pending.splice(0, this.maxBatch);
    const byTopic = new Map<string, Message[]>();
    for (const p of batch) {
      const list = byTopic.get(p.topic) ?? [];
      list.push(p.message);
      byTopic.set(p.topic, list);
    }
    try {
      await this.producer.sendBatch([...byTopic].map(([topic, messages]) => ({ topic, messages })));
      batch.forEach((p) => p.resolve());
    } catch (err) {
      batch.forEach((p) => p.reject(err as Error));
    } finally {
      this.#sending = false;
    }
    // Records that arrived while this batch was in flight have already waited: send them now.
    if (this.#pending.length > 0) {
      if (this.#timer) clearTimeout(this.#timer);
      this.#timer = undefined;
      void this.#flush();
    }
  }

  /** Waits until everything handed in so far is written (used at shutdown). */
  async flush(): Promise<void> {
    while (this.#pending.length > 0 || this.#sending) {
      if (!this.#sending) {
        if (this.#timer) clearTimeout(this.#timer);
        this.#timer = undefined;
        void this.#flush();
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}
