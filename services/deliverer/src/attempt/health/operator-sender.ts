import { createHash } from 'node:crypto';
import type { OperatorEventsSettings } from '@sluice/config';
import type { Logger } from '@sluice/logging';
import { signStandardWebhook, STANDARD_WEBHOOKS_HEADERS, webhookSecretKey } from '@sluice/webhook-signature';
import { request } from 'undici';
import { CONTENT_TYPE, USER_AGENT } from '@sluice/webhook';
import { OPERATOR_BACKOFF_MS, OPERATOR_QUEUE_MAX } from '../../service/constants.ts';
import type { OperatorEvent } from './operator-signals.ts';

export interface OperatorSenderOptions {
  /** The settings in force (read at each send, so a reload applies); undefined: events are not sent. */
  settings: () => OperatorEventsSettings | undefined;
  timeoutMs: () => number;
  logger: Logger;
  now: () => number;
  /** Told of each event's end: sent, failed (retries spent) or dropped (queue full, or no settings). */
  counted: (type: string, outcome: 'sent' | 'failed' | 'dropped') => void;
  /** Waits before each retry; default `OPERATOR_BACKOFF_MS`. */
  backoffMs?: readonly number[];
}

interface Queued {
  id: string;
  body: string;
  type: string;
}

/**
 * Sends operator events (docs/reference/operator-events.md) one at a time, in order, as signed
 * Standard Webhooks POSTs to `operatorEvents.url`, with retries and backoff. It never blocks a
 * delivery: `send` only queues, and a full queue drops its oldest event (logged and counted).
 * The `webhook-id` is derived from the event, so a receiver can drop one sent twice.
 */
export class OperatorSender {
  readonly #queue: Queued[] = [];
  readonly #options: OperatorSenderOptions;
  #running: Promise<void> | undefined;
  #closed = false;
  #wake: (() => void) | undefined;

  constructor(options: OperatorSenderOptions) {
    this.#options = options;
  }

  /** Queues an event; `at` (ISO) is when its fact happened, default now. */
  send(event: OperatorEvent, at = new Date(this.#options.now()).toISOString()): void {
    const { type, ...fields } = event;
    const body = JSON.stringify({ type, at, ...fields });
    if (this.#closed || this.#options.settings() === undefined) {
      this.#options.counted(event.type, 'dropped');
      return;
    }
    const id = `op_${createHash('sha256').update(body).digest('hex').slice(0, 32)}`;
    this.#queue.push({ id, body, type: event.type });
    if (this.#queue.length > OPERATOR_QUEUE_MAX) {
      const dropped = this.#queue.shift()!;
      this.#options.logger.warn({ type: dropped.type, id: dropped.id }, 'operator event queue full: oldest dropped');
      this.#options.counted(dropped.type, 'dropped');
    }
    this.#running ??= this.#drain().finally(() => {
      this.#running = undefined;
    });
  }

  /** Stops retrying (the event in hand gets its current try) and drops what is queued. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#wake?.();
    await this.#running;
    for (const q of this.#queue.splice(0)) this.#options.counted(q.type, 'dropped');
  }

  async #drain(): Promise<void> {
    while (!this.#closed && this.#queue.length > 0) {
      // Out of the queue while in hand: the bound counts the events waiting.
      const next = this.#queue.shift()!;
      const sent = await this.#deliver(next);
      this.#options.counted(next.type, sent ? 'sent' : 'failed');
    }
  }

  async #deliver(event: Queued): Promise<boolean> {
    const backoff = this.#options.backoffMs ?? OPERATOR_BACKOFF_MS;
    let lastError = '';
    for (let attempt = 0; ; attempt++) {
      const settings = this.#options.settings();
      if (settings === undefined) return false;
      try {
        const status = await this.#post(settings, event);
        if (status >= 200 && status < 300) return true;
        lastError = `http_${status}`;
      } catch (err) {
        lastError = (err as { code?: string }).code ?? (err as Error).message;
      }
      if (this.#closed || attempt >= backoff.length) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, backoff[attempt]);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    this.#options.logger.warn({ type: event.type, id: event.id, error: lastError }, 'operator event not delivered');
    return false;
  }

  async #post(settings: OperatorEventsSettings, event: Queued): Promise<number> {
    const timestamp = Math.floor(this.#options.now() / 1_000);
    const signature = signStandardWebhook(
      webhookSecretKey(settings.secret),
      event.id,
      timestamp,
      Buffer.from(event.body),
    );
    const res = await request(settings.url, {
      method: 'POST',
      body: event.body,
      headers: {
        'content-type': CONTENT_TYPE,
        'user-agent': USER_AGENT,
        [STANDARD_WEBHOOKS_HEADERS.id]: event.id,
        [STANDARD_WEBHOOKS_HEADERS.timestamp]: String(timestamp),
        [STANDARD_WEBHOOKS_HEADERS.signature]: signature,
      },
      headersTimeout: this.#options.timeoutMs(),
      bodyTimeout: this.#options.timeoutMs(),
    });
    await res.body.dump();
    return res.statusCode;
  }
}
