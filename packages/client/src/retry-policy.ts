import { MAX_RETRY_AFTER_MS } from './constants.ts';

/** What to do after one attempt. */
export type AttemptVerdict = { kind: 'success' } | { kind: 'retry'; retryAfterMs?: number } | { kind: 'fail' };

/**
 * Classifies one attempt (docs/reference/clients.md): 2xx succeeds; network errors (`status` undefined), 5xx
 * and 429 are retried, honouring `Retry-After` when present; every other status fails at once.
 */
export function classifyAttempt(
  status: number | undefined,
  retryAfter: string | undefined,
  nowMs: number,
): AttemptVerdict {
  if (status === undefined) return { kind: 'retry' };
  if (status >= 200 && status < 300) return { kind: 'success' };
  if (status === 429 || (status >= 500 && status < 600)) {
    const retryAfterMs = parseRetryAfter(retryAfter, nowMs);
    return retryAfterMs === undefined ? { kind: 'retry' } : { kind: 'retry', retryAfterMs };
  }
  return { kind: 'fail' };
}

/**
 * `Retry-After` as milliseconds to wait: either delta-seconds or an HTTP date, capped at
 * `MAX_RETRY_AFTER_MS`. `undefined` when absent or unreadable.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  let ms: number;
  if (/^\d+$/.test(text)) {
    ms = Number(text) * 1000;
  } else if (/^[A-Za-z]/.test(text)) {
    // Every HTTP-date form starts with a day name.
    const date = Date.parse(text);
    if (Number.isNaN(date)) return undefined;
    ms = Math.max(0, date - nowMs);
  } else {
    return undefined;
  }
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}
