import { redactUrl, type Logger } from '@sluice/logging';
import { LogRateLimiter } from '../service/log-rate-limit.ts';

/** One webhook request that got no answer within its deadline. */
export interface TimedOutRequest {
  destinationId: string;
  url: string;
  messageId: string;
  timeoutMs: number;
}

/** At most one timeout line per endpoint per this many ms. */
export const TIMEOUT_LOG_INTERVAL_MS = 10_000;

/**
 * Logs timed-out webhook requests as warnings (docs/reference/delivery.md: a timeout is logged),
 * at most one line per destination endpoint per `TIMEOUT_LOG_INTERVAL_MS`; the next line written
 * for the endpoint says how many were held back (`suppressed`), so a dead endpoint cannot flood
 * the logs. The endpoint URL is logged without userinfo and query.
 */
export class TimeoutLog {
  readonly #logger: Logger;
  readonly #limiter: LogRateLimiter;

  constructor(options: { logger: Logger; now?: () => number; intervalMs?: number }) {
    this.#logger = options.logger;
    this.#limiter = new LogRateLimiter({
      intervalMs: options.intervalMs ?? TIMEOUT_LOG_INTERVAL_MS,
      now: options.now ?? Date.now,
    });
  }

  timedOut(request: TimedOutRequest): void {
    const admission = this.#limiter.admit(`${request.destinationId} ${request.url}`);
    if (!admission.write) return;
    this.#logger.warn(
      {
        destinationId: request.destinationId,
        endpoint: redactUrl(request.url),
        messageId: request.messageId,
        timeoutMs: request.timeoutMs,
        suppressed: admission.suppressed,
      },
      'webhook request timed out',
    );
  }
}
