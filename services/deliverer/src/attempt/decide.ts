import { redactUrl } from '@sluice/logging';
import type { AttemptResult } from '../transport/attempt-result.ts';

export type Decision =
  | { kind: 'delivered' }
  | { kind: 'retry'; endpoints: string[]; lastError: string; retryAfterMs?: number }
  | { kind: 'dead'; reason: 'permanent_failure' | 'no_endpoints'; lastError?: string };

/** One endpoint's failure in `lastError`, which is recorded and printed: the URL redacted. */
function describe(r: AttemptResult): string {
  return `${redactUrl(r.endpoint)}: ${r.error ?? r.outcome}`;
}

/**
 * What to do with an event after one attempt to all its endpoints (docs/reference/delivery.md): delivered as soon
 * as one endpoint answered 2xx; otherwise retried to the endpoints whose failure was retryable;
 * dead-lettered at once when every failure was permanent.
 */
export function decide(results: readonly AttemptResult[]): Decision {
  if (results.length === 0) return { kind: 'dead', reason: 'no_endpoints' };
  if (results.some((r) => r.outcome === 'success')) return { kind: 'delivered' };
  const retryable = results.filter((r) => r.outcome === 'retryable');
  if (retryable.length === 0)
    return { kind: 'dead', reason: 'permanent_failure', lastError: results.map(describe).join('; ') };
  const waits = retryable.map((r) => r.retryAfterMs).filter((ms): ms is number => ms !== undefined);
  return {
    kind: 'retry',
    endpoints: retryable.map((r) => r.endpoint),
    lastError: retryable.map(describe).join('; '),
    ...(waits.length > 0 && { retryAfterMs: Math.max(...waits) }),
  };
}
