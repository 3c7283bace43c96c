import { createHash } from 'node:crypto';
import { OPERATOR_EVENTS_DESTINATION_ID, type OperatorEventsSettings, type SluiceConfig } from '@sluice/config';
import type { RecordSink } from '@sluice/kafka';
import { type Logger, redactUrl } from '@sluice/logging';
import { CONTENT_TYPE, USER_AGENT } from '@sluice/webhook';
import { signStandardWebhook, STANDARD_WEBHOOKS_HEADERS, webhookSecretKey } from '@sluice/webhook-signature';
import { OPERATOR_BACKOFF_MS, OPERATOR_QUEUE_MAX } from '../../service/constants.ts';
import type { AttemptResult } from '../../transport/attempt-result.ts';
import type { WebhookClient, WebhookRequest } from '../../transport/webhook-client.ts';
import { attemptEvent } from '../attempt-events.ts';
import type { OperatorEvent } from './operator-signals.ts';

/** The `sourceId` of an operator event's attempt records. */
export const OPERATOR_SOURCE_ID = 'sluice';

export interface OperatorOutboxDeps {
  /** The config in force (read at each try, so a reload applies); without `operatorEvents`, events are not sent. */
  config: () => SluiceConfig;
  /** The deliverer's webhook client: the SSRF guard, pools, deadline and classification of every webhook. */
  client: WebhookClient;
  /** Where each try's `sluice.attempts` record goes. */
  sink: RecordSink;
  logger: Logger;
  now: () => number;
  /** Told of each event's end: sent, failed (refused, or retries spent) or dropped (queue full, or no settings). */
  counted: (type: string, outcome: 'sent' | 'failed' | 'dropped') => void;
  /** Waits before each retry; default `OPERATOR_BACKOFF_MS`. */
  backoffMs?: readonly number[];
}

interface Queued {
  id: string;
  body: Buffer;
  type: string;
}

/**
 * Sends operator events (docs/reference/operator-events.md) one at a time, in order, as signed
 * Standard Webhooks POSTs to `operatorEvents.url` through the deliverer's webhook client, as a
 * destination's webhook goes: the SSRF guard refuses the same addresses, the answer is classified
 * the same (a permanent failure is not tried again, a retryable one after the backoff), and each
 * try writes its `sluice.attempts` record. It never blocks a delivery: `send` only queues, and a
 * full queue drops its oldest event (logged and counted). The `webhook-id` is derived from the
 * event, so a receiver can drop one sent twice.
 */
export class OperatorOutbox {
  readonly #queue: Queued[] = [];
  readonly #deps: OperatorOutboxDeps;
  #running: Promise<void> | undefined;
  #closed = false;
  #wake: (() => void) | undefined;

  constructor(deps: OperatorOutboxDeps) {
    this.#deps = deps;
  }

  /** Queues an event; `at` (ISO) is when its fact happened, default now. */
  readonly send = (event: OperatorEvent, at = new Date(this.#deps.now()).toISOString()): void => {
    const { type, ...fields } = event;
    const body = JSON.stringify({ type, at, ...fields });
    if (this.#closed || this.#deps.config().operatorEvents === undefined) {
      this.#deps.counted(event.type, 'dropped');
      return;
    }
    const id = `op_${createHash('sha256').update(body).digest('hex').slice(0, 32)}`;
    this.#queue.push({ id, body: Buffer.from(body), type: event.type });
    if (this.#queue.length > OPERATOR_QUEUE_MAX) {
      const dropped = this.#queue.shift()!;
      this.#deps.logger.warn({ type: dropped.type, id: dropped.id }, 'operator event queue full: oldest dropped');
      this.#deps.counted(dropped.type, 'dropped');
    }
    this.#running ??= this.#drain().finally(() => {
      this.#running = undefined;
    });
  };

  /** Stops retrying (the event in hand gets its current try) and drops what is queued. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#wake?.();
    await this.#running;
    for (const q of this.#queue.splice(0)) this.#deps.counted(q.type, 'dropped');
  }

  async #drain(): Promise<void> {
    while (!this.#closed && this.#queue.length > 0) {
      // Out of the queue while in hand: the bound counts the events waiting.
      const next = this.#queue.shift()!;
      const sent = await this.#deliver(next);
      this.#deps.counted(next.type, sent ? 'sent' : 'failed');
    }
  }

  async #deliver(event: Queued): Promise<boolean> {
    const backoff = this.#deps.backoffMs ?? OPERATOR_BACKOFF_MS;
    let lastError = '';
    for (let attempt = 1; ; attempt++) {
      const config = this.#deps.config();
      const settings = config.operatorEvents;
      if (settings === undefined) return false;
      const request = this.#request(event, settings, config.delivery.timeoutMs);
      const result = await this.#deps.client.send(request);
      this.#record(event, { attempt, result: { ...result, endpoint: redactUrl(settings.url) } });
      if (result.outcome === 'success') return true;
      lastError = result.error ?? (result.status !== undefined ? `http_${result.status}` : 'unknown');
      // Refused (SSRF policy, a 4xx, an invalid URL): a retry would not change it, as for any webhook.
      if (result.outcome === 'permanent' || this.#closed || attempt > backoff.length) break;
      await this.#wait(backoff[attempt - 1]!);
    }
    this.#deps.logger.warn({ type: event.type, id: event.id, error: lastError }, 'operator event not delivered');
    return false;
  }

  #request(event: Queued, settings: OperatorEventsSettings, timeoutMs: number): WebhookRequest {
    const timestamp = Math.floor(this.#deps.now() / 1_000);
    const signature = signStandardWebhook(webhookSecretKey(settings.secret), event.id, timestamp, event.body);
    return {
      url: settings.url,
      body: event.body,
      timeoutMs,
      headers: {
        'content-type': CONTENT_TYPE,
        'user-agent': USER_AGENT,
        [STANDARD_WEBHOOKS_HEADERS.id]: event.id,
        [STANDARD_WEBHOOKS_HEADERS.timestamp]: String(timestamp),
        [STANDARD_WEBHOOKS_HEADERS.signature]: signature,
      },
    };
  }

  /** The try's `sluice.attempts` record, built as a destination's (`attemptEvent`), keyed by the event's id. */
  #record(event: Queued, tried: { attempt: number; result: AttemptResult }): void {
    const subject = {
      messageId: event.id,
      sourceId: OPERATOR_SOURCE_ID,
      // The destination the event is about is in its body; no configured destination may take this id.
      destinationId: OPERATOR_EVENTS_DESTINATION_ID,
      eventType: event.type,
    };
    const value = JSON.stringify(attemptEvent(subject, tried.attempt, tried.result));
    this.#deps.sink
      .send(this.#deps.config().kafka.topics.attempts, { key: event.id, value })
      .catch((err: unknown) => this.#deps.logger.error({ err, id: event.id }, 'operator event attempt not recorded'));
  }

  #wait(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
