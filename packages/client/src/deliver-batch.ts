import { backoffDelay } from './backoff.ts';
import type { Clock } from './clock.ts';
import { sleep } from './clock.ts';
import type { DeliveryError } from './errors.ts';
import { BatchRejectedError, RetriesExhaustedError } from './errors.ts';
import type { HttpTransport } from './http-transport.ts';
import type { QueuedMessage } from './message-queue.ts';
import type { WireMessage } from './message-types.ts';
import { LIBRARY_NAME, LIBRARY_VERSION } from './constants.ts';
import { formatIsoTime } from './iso-time.ts';
import { classifyAttempt } from './retry-policy.ts';
import { renderBatchBody } from './wire-body.ts';

const USER_AGENT = `${LIBRARY_NAME}/${LIBRARY_VERSION}`;

export interface DeliverDeps {
  transport: HttpTransport;
  clock: Clock;
  random: () => number;
  /** Whether `log` writes anything (so messages are not built for nothing). */
  debug: boolean;
  log: (message: string) => void;
  url: string;
  authorization: string;
  timeoutMs: number;
  maxRetries: number;
  retryMinDelayMs: number;
  retryMaxDelayMs: number;
}

/**
 * Sends one batch until it succeeds, fails permanently or runs out of retries. Resolves with
 * `undefined` on success and with the `DeliveryError` otherwise; never rejects. Each attempt
 * gets a fresh `sentAt`. Classification and delays come from the pure `classifyAttempt` and
 * `backoffDelay`.
 */
export async function deliverBatch(
  batch: readonly QueuedMessage[],
  deps: DeliverDeps,
): Promise<DeliveryError | undefined> {
  const jsons = batch.map((item) => item.json);
  const headers = {
    authorization: deps.authorization,
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
  };
  for (let attempt = 1; ; attempt++) {
    const body = renderBatchBody(jsons, formatIsoTime(deps.clock.now()));
    let status: number | undefined;
    let retryAfter: string | undefined;
    let responseBody = '';
    let cause: unknown;
    try {
      const res = await deps.transport.send({ url: deps.url, headers, body, timeoutMs: deps.timeoutMs });
      ({ status, retryAfter, body: responseBody } = res);
    } catch (err) {
      cause = err;
    }
    const verdict = classifyAttempt(status, retryAfter, deps.clock.now());
    const what = status === undefined ? `network error: ${describe(cause)}` : `HTTP ${status}`;
    if (verdict.kind === 'success') {
      if (deps.debug)
        deps.log(`sent batch of ${batch.length} messages (${Buffer.byteLength(body)} bytes, attempt ${attempt})`);
      return undefined;
    }
    if (verdict.kind === 'fail') {
      deps.log(`batch of ${batch.length} messages rejected: ${what}; not retried`);
      return new BatchRejectedError(status ?? 0, responseBody, messagesOf(batch), attempt);
    }
    if (attempt > deps.maxRetries) {
      deps.log(`batch of ${batch.length} messages failed after ${attempt} attempts: ${what}`);
      return new RetriesExhaustedError(attempt, { status, cause }, messagesOf(batch));
    }
    const delay =
      verdict.retryAfterMs ??
      backoffDelay(attempt - 1, { minDelayMs: deps.retryMinDelayMs, maxDelayMs: deps.retryMaxDelayMs }, deps.random);
    deps.log(`attempt ${attempt} for batch of ${batch.length} messages failed (${what}); retrying in ${delay} ms`);
    await sleep(deps.clock, delay);
  }
}

/** The messages exactly as sent (parsed back only on failure, so the queue keeps strings alone). */
function messagesOf(batch: readonly QueuedMessage[]): WireMessage[] {
  return batch.map((item) => JSON.parse(item.json) as WireMessage);
}

function describe(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' ? `${code} ${cause.message}` : cause.message;
  }
  return String(cause);
}
