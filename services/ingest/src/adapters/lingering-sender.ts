import type { BatchProducer, Message } from '@sluice/kafka';
import type { TopicMessages } from 'kafkajs';
import { INGEST_DEFAULTS } from '../constants.ts';

/** One record to produce. */
export interface OutgoingRecord {
  topic: string;
  message: Message;
}

export interface LingeringSenderOptions {
  /** How long calls wait for company before a `sendBatch` (read on each batch, so reloads apply). Default 2 ms. */
  lingerMs: () => number;
  /** Largest `sendBatch` in value+key bytes; a request's records may span batches. Default 800 000 (`INGEST_DEFAULTS`). */
  maxBatchBytes?: number;
  /** `sendBatch` calls in flight at once; kafkajs serialises them per producer and broker. Default 4 (`INGEST_DEFAULTS`). */
  maxInFlight?: number;
  /** Called with each batch's record count (metrics). */
  onBatch?: (records: number) => void;
}

/** Thrown (rejected) when a request's records were not acknowledged within its deadline. */
export class SendTimeoutError extends Error {
  constructor(ms: number) {
    super(`records not acknowledged within ${ms} ms`);
    this.name = 'SendTimeoutError';
  }
}

interface Ticket {
  queued: number;
  outstanding: number;
  finished: boolean;
  resolve(): void;
  reject(err: unknown): void;
}

interface Entry {
  record: OutgoingRecord;
  bytes: number;
  ticket: Ticket;
}

const sizeOf = (m: Message) =>
  (m.value ? Buffer.byteLength(m.value as Buffer | string) : 0) +
  (m.key ? Buffer.byteLength(m.key as Buffer | string) : 0) +
  64;

/**
 * kafkajs sends one produce request per `send()` and has no linger, so this gathers the records
 * of concurrent HTTP requests for `lingerMs` and produces them with one `sendBatch`. Each
 * caller's promise resolves only when every one of its records was acknowledged (`acks=-1`
 * via `SafeProducer`, directly or in the producer thread), and rejects when any batch holding one of them failed or the deadline
 * passed; records of a caller that already gave up are not sent.
 */
export class LingeringSender {
  readonly #producer: BatchProducer;
  readonly #options: Required<Omit<LingeringSenderOptions, 'onBatch'>> & Pick<LingeringSenderOptions, 'onBatch'>;
  #queue: Entry[] = [];
  #timer: NodeJS.Timeout | undefined;
  #queuedBytes = 0;
  #inFlight = 0;
  #idle: (() => void)[] = [];

  constructor(producer: BatchProducer, options: LingeringSenderOptions) {
    this.#producer = producer;
    this.#options = {
      maxBatchBytes: INGEST_DEFAULTS.maxBatchBytes,
      maxInFlight: INGEST_DEFAULTS.maxInFlight,
      ...options,
    };
  }

  /** Resolves once all `records` are acknowledged; rejects on failure or after `timeoutMs`. */
  send(records: OutgoingRecord[], timeoutMs: number): Promise<void> {
    if (records.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => finish(new SendTimeoutError(timeoutMs)), timeoutMs);
      const ticket: Ticket = {
        queued: records.length,
        outstanding: 0,
        finished: false,
        resolve: () => finish(),
        reject: (err) => finish(err),
      };
      const finish = (err?: unknown) => {
        if (ticket.finished) return;
        ticket.finished = true;
        clearTimeout(timer);
        if (err === undefined) resolve();
        else reject(err);
      };
      for (const record of records) {
        const bytes = sizeOf(record.message);
        this.#queuedBytes += bytes;
        this.#queue.push({ record, bytes, ticket });
      }
      this.#schedule();
    });
  }

  /** Resolves when nothing is queued or in flight (for shutdown). */
  async drain(): Promise<void> {
    if (this.#queue.length === 0 && this.#inFlight === 0) return;
    await new Promise<void>((resolve) => this.#idle.push(resolve));
  }

  #schedule(): void {
    if (this.#timer || this.#inFlight >= this.#options.maxInFlight) return;
    if (this.#queuedBytes >= this.#options.maxBatchBytes) {
      this.#flush();
      return;
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#flush();
    }, this.#options.lingerMs());
  }

  #flush(): void {
    while (this.#inFlight < this.#options.maxInFlight && this.#queue.length > 0) {
      const batch = this.#take();
      if (batch.length > 0) this.#sendBatch(batch);
    }
    if (this.#queue.length === 0 && this.#inFlight === 0) this.#idle.splice(0).forEach((r) => r());
  }

  /** Takes up to `maxBatchBytes` of records, skipping those whose caller already gave up. */
  #take(): Entry[] {
    const batch: Entry[] = [];
    let bytes = 0;
    let i = 0;
    for (; i < this.#queue.length; i++) {
      const entry = this.#queue[i]!;
      if (entry.ticket.finished) {
        this.#queuedBytes -= entry.bytes;
        continue;
      }
      if (batch.length > 0 && bytes + entry.bytes > this.#options.maxBatchBytes) break;
      this.#queuedBytes -= entry.bytes;
      batch.push(entry);
      bytes += entry.bytes;
    }
    this.#queue = this.#queue.slice(i);
    return batch;
  }

  #sendBatch(batch: Entry[]): void {
    const byTopic = new Map<string, Message[]>();
    const tickets = new Set<Ticket>();
    for (const { record, ticket } of batch) {
      let list = byTopic.get(record.topic);
      if (!list) byTopic.set(record.topic, (list = []));
      list.push(record.message);
      ticket.queued -= 1;
      if (!tickets.has(ticket)) {
        tickets.add(ticket);
        ticket.outstanding += 1;
      }
    }
    const topicMessages: TopicMessages[] = [...byTopic].map(([topic, messages]) => ({ topic, messages }));
    this.#inFlight += 1;
    this.#options.onBatch?.(batch.length);
    this.#producer
      .sendBatch(topicMessages)
      .then(
        () => {
          for (const t of tickets) {
            t.outstanding -= 1;
            if (t.outstanding === 0 && t.queued === 0) t.resolve();
          }
        },
        (err: unknown) => tickets.forEach((t) => t.reject(err)),
      )
      .finally(() => {
        this.#inFlight -= 1;
        // Records that queued while this batch was in flight have lingered long enough.
        if (this.#queue.length > 0) {
          if (this.#timer) {
            clearTimeout(this.#timer);
            this.#timer = undefined;
          }
          this.#flush();
        } else if (this.#inFlight === 0) this.#idle.splice(0).forEach((r) => r());
      });
  }
}
