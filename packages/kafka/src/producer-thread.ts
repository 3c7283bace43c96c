import { Worker } from 'node:worker_threads';
import type { TopicMessages } from 'kafkajs';
import type { FromProducerThread, ProducerThreadOptions, ToProducerThread } from './producer-thread-worker.ts';
import { kafkaSecurityOf } from './kafka-security.ts';
import { packBatch } from './record-packing.ts';

/** Failure of a batch in the producer thread (the kafkajs error's name and message, and its Kafka error type if any). */
export class ProducerThreadError extends Error {
  /** The Kafka protocol error type (`MESSAGE_TOO_LARGE`, …), when the broker refused the batch. */
  readonly type: string | undefined;

  constructor(name: string, message: string, type?: string) {
    super(message);
    this.name = `ProducerThreadError(${name})`;
    this.type = type;
  }
}

/** The thread's producers could not connect; `retryable` when Kafka's answer was a retriable one. */
export class ProducerThreadStartError extends Error {
  readonly code = 'producer_thread_start_failed';
  readonly retryable: boolean;
  constructor(message: string, retryable: boolean) {
    super(`producer thread could not connect: ${message}`);
    this.name = 'ProducerThreadStartError';
    this.retryable = retryable;
  }
}

export type { ProducerThreadOptions };

/** The thread's name in the operating system. */
export const PRODUCER_THREAD_NAME = 'producer-thread';

/**
 * `sendBatch` run in a worker thread that owns the SafeProducers (idempotent, acks=-1, one
 * request in flight each). kafkajs's per-record encoding is CPU-heavy (about as much as all of
 * ingest's own work per event; the largest Kafka cost of the deliverer, whose attempt records
 * it writes): on its own thread it runs in parallel with the service's HTTP and JSON work.
 * A batch's promise resolves only when the thread reports kafkajs's ack of that batch; it
 * rejects on a kafkajs error or if the thread dies.
 */
export class ProducerThread {
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve(): void; reject(err: unknown): void }>();
  #nextId = 0;
  #connected = false;
  #closed: (() => void) | undefined;
  #closing = false;
  #dead: Error | undefined;
  #onDeath!: (err: Error) => void;
  /** Resolves if the thread ends other than through `disconnect()` (a fatal error for the service). */
  readonly died = new Promise<Error>((resolve) => (this.#onDeath = resolve));

  private constructor(worker: Worker) {
    this.#worker = worker;
  }

  /** Starts the thread and connects its producers. */
  static async start(options: ProducerThreadOptions): Promise<ProducerThread> {
    const data: ProducerThreadOptions = {
      service: options.service,
      brokers: options.brokers,
      clientId: options.clientId,
      logLevel: options.logLevel,
      producers: options.producers,
      ...(options.security && { security: kafkaSecurityOf(options.security) }),
    };
    // Named, so its CPU shows apart from the main thread's (`top -H`, /proc/<pid>/task/*/comm; 15 characters at most).
    const worker = new Worker(new URL('./producer-thread-worker.ts', import.meta.url), {
      workerData: data,
      name: PRODUCER_THREAD_NAME,
    });
    const thread = new ProducerThread(worker);
    const started = new Promise<void>((resolve, reject) => {
      worker.on('message', (m: FromProducerThread) => {
        if (m.kind === 'ready') resolve();
        else if (m.kind === 'start-failed') reject(new ProducerThreadStartError(m.message, m.retriable));
        else thread.#onMessage(m);
      });
      worker.on('error', (err) => {
        reject(err);
        thread.#die(err);
      });
      worker.on('exit', (code) => {
        const err = new Error(`producer thread exited (code ${code})`);
        reject(err);
        thread.#die(err);
      });
    });
    try {
      await started;
    } catch (err) {
      // A thread whose producers could not connect is still running: end it, so a failed start leaves nothing.
      thread.#closing = true;
      await worker.terminate();
      throw err;
    }
    return thread;
  }

  get connected(): boolean {
    return this.#connected && !this.#dead;
  }

  sendBatch(topicMessages: TopicMessages[]): Promise<void> {
    if (this.#dead) return Promise.reject(this.#dead);
    const id = this.#nextId++;
    return new Promise<void>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      const packed = packBatch(topicMessages);
      const msg: ToProducerThread = packed ? { kind: 'send', id, packed } : { kind: 'send', id, topicMessages };
      this.#worker.postMessage(msg, packed ? [packed.data] : []);
    });
  }

  /** Lets in-flight batches finish, disconnects the producers and ends the thread. */
  async disconnect(): Promise<void> {
    if (this.#dead) return;
    this.#closing = true;
    await new Promise<void>((resolve) => {
      this.#closed = resolve;
      this.#worker.postMessage({ kind: 'close' } satisfies ToProducerThread);
    });
    await this.#worker.terminate();
  }

  #onMessage(m: FromProducerThread): void {
    if (m.kind === 'connected') this.#connected = m.connected;
    else if (m.kind === 'sent') this.#settle(m.id)?.resolve();
    else if (m.kind === 'failed') this.#settle(m.id)?.reject(new ProducerThreadError(m.name, m.message, m.type));
    else if (m.kind === 'closed') this.#closed?.();
  }

  #settle(id: number) {
    const entry = this.#pending.get(id);
    this.#pending.delete(id);
    return entry;
  }

  #die(err: Error): void {
    if (this.#dead) return;
    this.#dead = err;
    this.#connected = false;
    for (const entry of this.#pending.values()) entry.reject(err);
    this.#pending.clear();
    this.#closed?.();
    if (!this.#closing) this.#onDeath(err);
  }
}
