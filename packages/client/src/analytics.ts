import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { BuildEnv, ParamsByType } from './build-message.ts';
import { buildMessage } from './build-message.ts';
import { createDebugLog } from './debug-log.ts';
import type { DeliverDeps } from './deliver-batch.ts';
import { deliverBatch } from './deliver-batch.ts';
import type { DeliveryError } from './errors.ts';
import { ClientClosedError, QueueFullError } from './errors.ts';
import type { HttpTransport } from './http-transport.ts';
import { MessageQueue } from './message-queue.ts';
import type * as Params from './message-types.ts';
import type { AnalyticsOptions, Settings } from './options.ts';
import { resolveSettings } from './options.ts';
import { createUndiciTransport } from './undici-transport.ts';
import { BATCH_BODY_OVERHEAD_BYTES } from './wire-body.ts';

export interface AnalyticsEvents {
  /** A batch could not be delivered. */
  error: [error: DeliveryError];
}

interface FlushWaiter {
  /** Resolved once every call with `seq ≤ through` is settled (delivered or reported). */
  through: number;
  resolve: () => void;
}

/**
 * The Sluice tracking client. Calls validate and queue synchronously (throwing on invalid
 * input) and return the message's `messageId`; batches are sent in the background when
 * `flushAt` calls are queued, when a queued call has waited `flushAfter`, on `flush()` and on
 * `close()`.
 */
export class Analytics extends EventEmitter<AnalyticsEvents> {
  readonly #settings: Settings;
  readonly #transport: HttpTransport;
  readonly #ownsTransport: boolean;
  readonly #log: (message: string) => void;
  readonly #buildEnv: BuildEnv;
  readonly #deliverDeps: DeliverDeps;
  readonly #queue = new MessageQueue();
  /** Batches being sent, by the `seq` of their first call. */
  readonly #inFlight = new Set<number>();
  #waiters: FlushWaiter[] = [];
  /** Every call with `seq ≤ #flushThrough` is sent without waiting for `flushAt`. */
  #flushThrough = 0;
  #timer: unknown = undefined;
  #pumpScheduled = false;
  #closing: Promise<void> | undefined;

  constructor(writeKey: string, options: AnalyticsOptions = {}) {
    super();
    const settings = resolveSettings(writeKey, options, process.env);
    this.#settings = settings;
    this.#ownsTransport = settings.transport === undefined;
    this.#transport = settings.transport ?? createUndiciTransport({ connections: settings.maxInFlight });
    this.#log = createDebugLog(settings.debug, settings.log, () => settings.clock.now());
    this.#buildEnv = { now: () => settings.clock.now(), uuid: randomUUID };
    this.#deliverDeps = { ...settings, transport: this.#transport, log: this.#log };
  }

  /** Who the user is, and what they are like. Returns the `messageId`. */
  identify(params: Params.IdentifyParams): string {
    return this.#enqueue('identify', params);
  }

  /** Something the user did; `event` is required. Returns the `messageId`. */
  track(params: Params.TrackParams): string {
    return this.#enqueue('track', params);
  }

  /** A web page view; page fields go under `properties`. Returns the `messageId`. */
  page(params: Params.PageParams): string {
    return this.#enqueue('page', params);
  }

  /** A mobile screen view. Returns the `messageId`. */
  screen(params: Params.ScreenParams): string {
    return this.#enqueue('screen', params);
  }

  /** Ties the user to a group; `groupId` is required. Returns the `messageId`. */
  group(params: Params.GroupParams): string {
    return this.#enqueue('group', params);
  }

  /** Merges two identities; `userId` and `previousId` are required. Returns the `messageId`. */
  alias(params: Params.AliasParams): string {
    return this.#enqueue('alias', params);
  }

  /** Number of calls waiting to be sent (not counting batches in flight). */
  get queued(): number {
    return this.#queue.size;
  }

  /**
   * Sends everything queued so far and resolves when all of it is delivered or reported as
   * failed (through `onError` / `'error'`); it never rejects.
   */
  flush(): Promise<void> {
    const through = this.#queue.lastSeq;
    this.#flushThrough = Math.max(this.#flushThrough, through);
    this.#pump();
    if (this.#settled(through)) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ through, resolve }));
  }

  /**
   * Refuses further calls, flushes everything queued, waits for every batch in flight (including
   * its retries), then stops timers and releases connections. Safe to call more than once.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#log('closing');
      await this.flush();
      this.#disarmTimer();
      if (this.#ownsTransport) await this.#transport.close();
      this.#log('closed');
    })();
    return this.#closing;
  }

  #enqueue<T extends Params.MessageType>(type: T, params: ParamsByType[T]): string {
    if (this.#closing) throw new ClientClosedError();
    if (this.#queue.size >= this.#settings.maxQueueSize) throw new QueueFullError(this.#settings.maxQueueSize);
    const { message, json, bytes } = buildMessage(type, params, this.#buildEnv);
    this.#queue.push(json, bytes);
    if (this.#settings.debug) this.#log(`queued ${type} ${message.messageId} (${bytes} bytes)`);
    if (this.#queue.size >= this.#settings.flushAt) this.#schedulePump();
    else if (this.#timer === undefined) this.#armTimer();
    return message.messageId;
  }

  /** Deferred to the next turn of the event loop so a burst of calls fills whole batches. */
  #schedulePump(): void {
    if (this.#pumpScheduled) return;
    this.#pumpScheduled = true;
    setImmediate(() => {
      this.#pumpScheduled = false;
      this.#pump();
    });
  }

  /** Starts as many batches as the in-flight limit allows and the flush rules call for. */
  #pump(): void {
    const queue = this.#queue;
    while (
      this.#inFlight.size < this.#settings.maxInFlight &&
      queue.size > 0 &&
      (queue.size >= this.#settings.flushAt || queue.firstSeq <= this.#flushThrough)
    ) {
      this.#send(queue.takeBatch(BATCH_BODY_OVERHEAD_BYTES));
    }
    const waiting = queue.size > 0 && queue.lastSeq > this.#flushThrough;
    if (!waiting) this.#disarmTimer();
    else if (this.#timer === undefined) this.#armTimer();
  }

  #send(batch: ReturnType<MessageQueue['takeBatch']>): void {
    const first = batch[0]!.seq;
    this.#inFlight.add(first);
    void deliverBatch(batch, this.#deliverDeps).then((error) => {
      this.#inFlight.delete(first);
      if (error) this.#report(error);
      this.#pump();
      this.#wakeWaiters();
    });
  }

  #report(error: DeliveryError): void {
    let handled = false;
    if (this.#settings.onError) {
      handled = true;
      try {
        this.#settings.onError(error);
      } catch (err) {
        this.#log(`onError threw: ${(err as Error).message}`);
      }
    }
    if (this.listenerCount('error') > 0) {
      handled = true;
      try {
        this.emit('error', error);
      } catch (err) {
        this.#log(`an 'error' listener threw: ${(err as Error).message}`);
      }
    }
    if (!handled) {
      try {
        this.#settings.log(`analytics: ${error.messages.length} messages not delivered: ${error.message}`);
      } catch {
        // A failing log sink must never stop delivery.
      }
    }
  }

  #settled(through: number): boolean {
    if (this.#queue.firstSeq <= through) return false;
    for (const first of this.#inFlight) if (first <= through) return false;
    return true;
  }

  #wakeWaiters(): void {
    if (this.#waiters.length === 0) return;
    const pending: FlushWaiter[] = [];
    for (const waiter of this.#waiters) {
      if (this.#settled(waiter.through)) waiter.resolve();
      else pending.push(waiter);
    }
    this.#waiters = pending;
  }

  #armTimer(): void {
    this.#timer = this.#settings.clock.setTimeout(() => {
      this.#timer = undefined;
      this.#log('flush timer fired');
      this.#flushThrough = Math.max(this.#flushThrough, this.#queue.lastSeq);
      this.#pump();
    }, this.#settings.flushAfterMs);
  }

  #disarmTimer(): void {
    if (this.#timer === undefined) return;
    this.#settings.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
