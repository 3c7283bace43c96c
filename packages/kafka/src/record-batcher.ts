import type { Message, TopicMessages } from 'kafkajs';
import type { Logger } from '@sluice/logging';
import type { Registry } from 'prom-client';
import type { BatchProducer } from './batch-producer.ts';
import { SideRecordRefusedError } from './errors.ts';
import { refusalOf, SIZE_REFUSALS } from './record-refusal.ts';
import { SideRecordMetrics } from './side-record-metrics.ts';

/** Most records in one `sendBatch`. */
const MAX_BATCH = 2_000;
/**
 * Most key + value + header bytes in one `sendBatch`: below the broker's default 1 MB limit of one
 * record batch (a partition's share of a request), even when every record lands on one partition.
 */
export const MAX_BATCH_BYTES = 800_000;
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
  /** Its key, value and header bytes. */
  bytes: number;
  /** When `send` was called (`Date.now()`). */
  at: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** When a batch leaves (see `sendDelay`). */
export interface SendPolicy {
  /** How long records wait for company after the batcher was idle (0: the next tick). */
  lingerMs: number;
  /** The least time between the starts of two `sendBatch`es, unless a batch is full. */
  sendIntervalMs: number;
  /** Most records, and most bytes, in one `sendBatch`; a full batch leaves at once. */
  maxBatch: number;
  maxBatchBytes: number;
}

/**
 * How many ms from `now` the waiting records leave (0: at once), with no batch in flight. A full
 * batch (`maxBatch` records or `maxBatchBytes`) leaves at once. Otherwise the oldest record waits `lingerMs` for company, and a batch never
 * starts sooner than `sendIntervalMs` after the one before it: when idle the previous send is long
 * past and a record waits only `lingerMs`; under load the records of a whole interval (and of the
 * send in flight) leave together, so batches grow with the rate while the sends per second stay
 * bounded. A Kafka write costs far more per request than per record (measured with kafkajs on
 * a local broker: 22 µs of client CPU per record in sends of 20, 7 µs in sends of 500).
 */
export function sendDelay(
  policy: SendPolicy,
  state: { now: number; waiting: number; waitingBytes: number; oldestAt: number; lastSendAt: number },
): number {
  if (state.waiting >= policy.maxBatch || state.waitingBytes >= policy.maxBatchBytes) return 0;
  return Math.max(
    0,
    state.oldestAt + policy.lingerMs - state.now,
    state.lastSendAt + policy.sendIntervalMs - state.now,
  );
}

export interface RecordBatcherOptions {
  /** How long records wait for company after the batcher was idle (0: the next tick). */
  lingerMs: number;
  /**
   * The least time between the starts of two `sendBatch`es under load (a full batch leaves at
   * once); default 0: a batch leaves as soon as the one before it is acknowledged.
   */
  sendIntervalMs?: number;
  /** Most records in one `sendBatch`; default 2,000. */
  maxBatch?: number;
  /** Most key + value + header bytes in one `sendBatch` (a larger record leaves alone); default `MAX_BATCH_BYTES`. */
  maxBatchBytes?: number;
  /** First and longest wait between tries of a batch Kafka did not take; default 0.5 s and 10 s. */
  retryMinMs?: number;
  retryMaxMs?: number;
  /** `flushThenClose`'s wait for unwritten records; default 5 s. */
  shutdownGraceMs?: number;
  /** Each failed try, and each record Kafka refused, is logged here as a warning. */
  logger: Logger;
  /** Where records per send and write times are measured (docs/reference/observability.md); default none. */
  registry?: Registry;
}

/** The batcher was closed while a batch was still waiting for Kafka. */
export class RecordBatcherClosedError extends Error {
  constructor(cause: unknown) {
    super(`side records not written before shutdown: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'RecordBatcherClosedError';
  }
}

/**
 * Gathers records from many concurrent handlers and writes them in one `sendBatch` (idempotent
 * `SafeProducer`, one request in flight), so thousands of records a second do not each pay a
 * Kafka request: a batch leaves after `lingerMs` when idle, and under load at most once per
 * `sendIntervalMs` unless full (`sendDelay`). Each caller still waits for its own record's
 * acknowledgement before its offset can be committed. The deliverer writes its attempt, retry and
 * dead-letter records through one; the retry service its forwards and dead letters.
 *
 * A batch Kafka does not take (broker away longer than kafkajs's own retries) is tried again,
 * with backoff, until it is written: the handlers waiting for it simply wait, their offsets stay
 * uncommitted, and the service rides out a broker outage instead of exiting. A batch that failed
 * ambiguously may then be written twice (at-least-once, like every Sluice record). Only `close()`
 * ends the tries: what is still unwritten then is rejected.
 *
 * A record Kafka refuses for its own content (too large for the topic, invalid for it: `refusalOf`)
 * would be refused on every try, and would hold up every later record of the process behind it.
 * It is isolated instead (`#write`): its sender's promise alone is rejected with a
 * `SideRecordRefusedError` (not retryable), it is counted (`sluice_side_records_refused_total`)
 * and logged without its content, and the records sent beside it are written.
 */
export class RecordBatcher implements RecordSink {
  #pending: Pending[] = [];
  #pendingBytes = 0;
  #timer: NodeJS.Timeout | undefined;
  #sending = false;
  #closed = false;
  /** Start of the latest `sendBatch` (its first try). */
  #lastSendAt = Number.NEGATIVE_INFINITY;
  #wakeBackoff: (() => void) | undefined;
  readonly #options: Required<Omit<RecordBatcherOptions, 'registry'>>;
  readonly #metrics: SideRecordMetrics | undefined;

  private readonly producer: BatchProducer;
  constructor(producer: BatchProducer, options: RecordBatcherOptions) {
    this.producer = producer;
    const { registry, ...rest } = options;
    this.#options = {
      sendIntervalMs: 0,
      maxBatch: MAX_BATCH,
      maxBatchBytes: MAX_BATCH_BYTES,
      retryMinMs: RETRY_MIN_MS,
      retryMaxMs: RETRY_MAX_MS,
      shutdownGraceMs: SHUTDOWN_GRACE_MS,
      ...rest,
    };
    this.#metrics = registry && SideRecordMetrics.in(registry);
  }

  send(topic: string, message: Message): Promise<void> {
    if (this.#closed) return Promise.reject(new RecordBatcherClosedError('closed'));
    return new Promise<void>((resolve, reject) => {
      const bytes = recordBytes(message);
      this.#pending.push({ topic, message, bytes, at: Date.now(), resolve, reject });
      this.#pendingBytes += bytes;
      if (this.#sending) return;
      if (this.#pending.length >= this.#options.maxBatch || this.#pendingBytes >= this.#options.maxBatchBytes)
        this.#sendNow();
      // Even when due at once, records of the same tick leave together.
      else if (!this.#timer) this.#timer = setTimeout(() => this.#sendNow(), this.#delay());
    });
  }

  /** With nothing in flight: how long the waiting records still wait (`sendDelay`). */
  #delay(): number {
    return sendDelay(this.#options, {
      now: Date.now(),
      waiting: this.#pending.length,
      waitingBytes: this.#pendingBytes,
      oldestAt: this.#pending[0]!.at,
      lastSendAt: this.#lastSendAt,
    });
  }

  #sendNow(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    void this.#flush();
  }

  async #flush(): Promise<void> {
    if (this.#sending || this.#pending.length === 0) return;
    this.#sending = true;
    this.#lastSendAt = Date.now();
    const batch = this.#pending.splice(0, this.#batchLength());
    for (const p of batch) this.#pendingBytes -= p.bytes;
    try {
      await this.#write(batch);
    } finally {
      this.#sending = false;
    }
    // Records that arrived while this batch was in flight leave once due (at once if they already waited).
    if (this.#pending.length === 0 || this.#closed || this.#timer) return;
    const delay = this.#delay();
    if (delay === 0) void this.#flush();
    else this.#timer = setTimeout(() => this.#sendNow(), delay);
  }

  /**
   * Writes `batch` and settles each record's promise; resolves to how many of its records Kafka
   * refused. When Kafka refuses the batch for the content of some of its records (`refusalOf`),
   * they are isolated and only they are rejected (`SideRecordRefusedError`), the others written:
   * for a size refusal the largest record is tried alone first (the likeliest culprit: one
   * oversized record among many costs three sends), then the rest; otherwise, or when the largest
   * alone was taken (the records of one partition were too many together), the batch is halved
   * and each half written in turn. The broker writes the partitions of a refused request that it
   * did not refuse, so records of other partitions are written again (at-least-once, like every
   * Sluice record).
   */
  async #write(batch: Pending[]): Promise<number> {
    const started = Date.now();
    try {
      await this.#sendUntilWritten(topicMessagesOf(batch));
    } catch (err) {
      const reason = refusalOf(err);
      if (reason === undefined) {
        for (const p of batch) p.reject(err as Error);
        return 0;
      }
      if (batch.length === 1) {
        this.#refuse(batch[0]!, reason, err);
        return 1;
      }
      let rest = batch;
      let refused = 0;
      if (SIZE_REFUSALS.has(reason)) {
        const largest = largestIndex(batch);
        refused = await this.#write([batch[largest]!]);
        rest = batch.filter((_, i) => i !== largest);
        if (refused > 0) return refused + (await this.#write(rest));
      }
      const half = Math.ceil(rest.length / 2);
      return refused + (await this.#write(rest.slice(0, half))) + (await this.#write(rest.slice(half)));
    }
    this.#metrics?.written(batch.length, Date.now() - started);
    for (const p of batch) p.resolve();
    return 0;
  }

  #refuse(p: Pending, reason: string, cause: unknown): void {
    this.#metrics?.refused.inc({ topic: p.topic, reason });
    // The record's size and where it was going; never its key, value or headers.
    this.#options.logger.warn(
      { topic: p.topic, reason, bytes: p.bytes, err: cause },
      'side record refused by Kafka; not written, the records beside it were',
    );
    p.reject(new SideRecordRefusedError(p.topic, reason, { cause }));
  }

  /** How many of the waiting records fit one `sendBatch` (at least one). */
  #batchLength(): number {
    const { maxBatch, maxBatchBytes } = this.#options;
    let bytes = this.#pending[0]!.bytes;
    let n = 1;
    while (n < this.#pending.length && n < maxBatch && bytes + this.#pending[n]!.bytes <= maxBatchBytes) {
      bytes += this.#pending[n]!.bytes;
      n += 1;
    }
    return n;
  }

  async #sendUntilWritten(topicMessages: TopicMessages[]): Promise<void> {
    for (let tries = 1; ; tries++) {
      try {
        await this.producer.sendBatch(topicMessages);
        return;
      } catch (err) {
        // Sent again as it is, it would be refused again: `#write` isolates the refused records.
        if (refusalOf(err) !== undefined) throw err;
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
      if (!this.#sending) this.#sendNow();
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
    this.#pendingBytes = 0;
    unsent.forEach((p) => p.reject(new RecordBatcherClosedError('closed')));
  }
}

/** Where the record with the most bytes is in `batch` (the first of equals). */
function largestIndex(batch: Pending[]): number {
  let at = 0;
  for (let i = 1; i < batch.length; i++) if (batch[i]!.bytes > batch[at]!.bytes) at = i;
  return at;
}

/** A batch's records grouped by topic, in order, for `sendBatch`. */
function topicMessagesOf(batch: Pending[]): TopicMessages[] {
  const byTopic = new Map<string, Message[]>();
  for (const p of batch) {
    const list = byTopic.get(p.topic);
    if (list) list.push(p.message);
    else byTopic.set(p.topic, [p.message]);
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}

const sizeOf = (v: string | Buffer | null | undefined) =>
  v === null || v === undefined ? 0 : typeof v === 'string' ? Buffer.byteLength(v) : v.length;

/** Key, value and header bytes of a record (what counts toward the broker's batch limit, less framing). */
function recordBytes(message: Message): number {
  let bytes =
    sizeOf(message.key as string | Buffer | null | undefined) + sizeOf(message.value as string | Buffer | null);
  if (message.headers)
    for (const [name, value] of Object.entries(message.headers)) {
      bytes += name.length;
      for (const v of Array.isArray(value) ? value : [value]) bytes += sizeOf(v as string | Buffer | undefined);
    }
  return bytes;
}
