import type { Dispatcher } from 'undici';
import type { EndpointTarget } from './endpoint-target.ts';

/** One webhook POST: where, what, and the one deadline it runs under. */
export interface WebhookPost {
  target: EndpointTarget;
  headers: Record<string, string>;
  body: Buffer;
  /** Aborted when the deadline passes (connect, the answer's headers and the body read). */
  signal: NonNullable<Dispatcher.RequestOptions['signal']>;
  /** The deadline, `delivery.timeoutMs`. */
  timeoutMs: number;
}

/** How much later than the deadline undici's own timers are set, so that they never fire first. */
const UNDICI_TIMER_SLACK_MS = 1_000;

/**
 * Sends one webhook POST on `dispatcher` (a pool or a client whose connector is `webhookConnector`).
 * Redirects are never followed: undici's `request` does not follow them.
 */
export function webhookPost(dispatcher: Dispatcher, post: WebhookPost): Promise<Dispatcher.ResponseData> {
  return dispatcher.request({
    path: post.target.path,
    method: 'POST',
    headers: post.headers,
    body: post.body,
    signal: post.signal,
    headersTimeout: post.timeoutMs + UNDICI_TIMER_SLACK_MS,
    bodyTimeout: post.timeoutMs + UNDICI_TIMER_SLACK_MS,
  });
}
