import type { Message } from 'kafkajs';
import type { Logger } from '@sluice/logging';
import type { BatchProducer } from './batch-producer.ts';

/** Most records in one `sendBatch`. */
const MAX_BATCH = 2_000;
/** Waits between tries of a batch Kafka did not take (doubling from min to max). */
const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 10_000;
/** At shutdown, how long records still unwritten may take before they are given up (their offsets stay uncommitted). */
const SHUTDOWN_GRACE_MS = 5_000;

/** Where a service writes records one at a time while they leave in batches. */
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

export interface RecordBatcherOptions {
  /** How long records wait for company before a `sendBatch` (0: the next tick). */
  lingerMs: number;
  /** Most records in one `sendBatch`; default 2,000. */
  maxBatch?: number;
  /** First and longest wait between tries of a batch Kafka did not take; default 0.5 s and 10 s. */
  retryMinMs?: number;
  retryMaxMs?: number;
  /** `flushThenClose`'s wait for unwritten records; default 5 s. */
  shutdownGraceMs?: number;
  /** Each failed try is logged here as a warning. */
  logger: Logger;
}

/** The batcher was closed while a batch was still waiting for Kafka. */
export class RecordBatcherClosedError extends Error {
  constructor(cause: unknown) {
    super(`side records not written before shutdown: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'RecordBatcherClosedError';
  }
}

/**
 * Gathers records from many concurrent handlers for `lingerMs` and writes them in one `sendBatch`
 * (idempotent `SafeProducer`, one request in flight; records that arrive while a batch is in
 * flight leave together right after it), so thousands of records a second do not each pay a
 * Kafka round trip. Each caller still waits for its own record's acknowledgement before its
 * offset can be committed. The deliverer writes its attempt, retry and dead-letter records
 * through one; the retry service its forwards and dead letters.
 *
 * A batch Kafka does not take (broker away longer than kafkajs's own retries) is tried again,
 * with backoff, until it is written: the handlers waiting for it simply wait, their offsets stay
 * uncommitted, and the service rides out a broker outage instead of exiting. A batch that failed
 * ambiguously may then be written twice (at-least-once, like every Sluice record). Only `close()`
 * ends the tries: what is still unwritten then is rejected.
 */
export class RecordBatcher implements RecordSink {
  #pending: Pending[] = [];
  #timer: NodeJS.Timeout | undefined;
  #sending = false;
  #closed = false;
  #wakeBackoff: (() => void) | undefined;
  readonly #options: Required<RecordBatcherOptions>;

  private readonly producer: BatchProducer;
  constructor(producer: BatchProducer, options: RecordBatcherOptions) {
    this.producer = producer;
    this.#options = {
      maxBatch: MAX_BATCH,
      retryMinMs: RETRY_MIN_MS,
      retryMaxMs: RETRY_MAX_MS,
      shutdownGraceMs: SHUTDOWN_GRACE_MS,
      ...options,
    };
  }

  send(topic: string, message: Message): Promise<void> {
    if (this.#closed) return Promise.reject(new RecordBatcherClosedError('closed'));
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ topic, message, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#sending || this.#timer) return;
    if (this.#pending.length >= this.#options.maxBatch) {
      void this.#flush();
      return;
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#flush();
    }, this.#options.lingerMs);
  }

  async #flush(): Promise<void> {
    if (this.#sending || this.#pending.length === 0) return;
    this.#sending = true;
    const batch = this.#pending.splice(0, this.#options.maxBatch);
    const byTopic = new Map<string, Message[]>();
    for (const p of batch) {
      const list = byTopic.get(p.topic) ?? [];
      list.push(p.message);
      byTopic.set(p.topic, list);
    }
    try {
      await this.#sendUntilWritten([...byTopic].map(([topic, messages]) => ({ topic, messages })));
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

  async #sendUntilWritten(topicMessages: { topic: string; messages: Message[] }[]): Promise<void> {
    for (let tries = 1; ; tries++) {
      try {
        await this.producer.sendBatch(topicMessages);
        return;
      } catch (err) {
        if (this.#closed) throw new RecordBatcherClosedError(err);
        const waitMs = Math.min(this.#options.retryMaxMs, this.#options.retryMinMs * 2 ** (tries - 1));
        this.#options.logger.warn(
          { err, tries, retryInMs: waitMs },
          'records not written (Kafka unavailable?); trying again',
        );
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, waitMs);
          this.#wakeBackoff = () => (clearTimeout(timer), resolve());
        });
        this.#wakeBackoff = undefined;
        if (this.#closed) throw new RecordBatcherClosedError(err);
      }
    }
  }

  /** Waits until everything handed in so far is written (used at shutdown, before `close`). */
  async flush(): Promise<void> {
    while ((this.#pending.length > 0 || this.#sending) && !this.#closed) {
      if (!this.#sending) {
        if (this.#timer) clearTimeout(this.#timer);
        this.#timer = undefined;
        void this.#flush();
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  /** Shutdown: lets what was handed in be written for up to `shutdownGraceMs`, then `close()`s. */
  async flushThenClose(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.flush(),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, this.#options.shutdownGraceMs))),
    ]);
    clearTimeout(timer);
    this.close();
  }

  /**
   * Stops trying: a batch waiting between tries is rejected at once, one in flight when kafkajs
   * gives up on it, and whatever was not yet sent at once. Their handlers fail, so their offsets
   * are never committed and the events are delivered again after a restart.
   */
  close(): void {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#wakeBackoff?.();
    const unsent = this.#pending.splice(0);
    unsent.forEach((p) => p.reject(new RecordBatcherClosedError('closed')));
  }
}
