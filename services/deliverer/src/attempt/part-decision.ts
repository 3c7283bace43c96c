import { redactUrl } from '@sluice/logging';
import type { AttemptResult } from '../transport/attempt-result.ts';
import { decide, type Decision } from './decide.ts';
import type { Deferred } from './deferral.ts';

/**
 * Handed back without any request: every endpoint was held back. Retried to those endpoints with
 * no attempt counted.
 */
export type PartDecision = Decision | { kind: 'defer'; endpoints: string[]; lastError: string };

/** One held-back endpoint in `lastError`, which is recorded and shown: the URL redacted. */
const describeDeferred = (d: Deferred) => `${redactUrl(d.endpoint)}: ${d.reason}`;

/**
 * What to do with a destination's part of an event, given the requests made and the endpoints
 * held back (docs/deliverer.md): delivered at the first 2xx; otherwise the endpoints that failed
 * retryably and those held back are retried; dead-lettered only when every endpoint was tried and
 * failed permanently.
 */
export function decidePart(results: readonly AttemptResult[], deferred: readonly Deferred[]): PartDecision {
  if (results.some((r) => r.outcome === 'success')) return { kind: 'delivered' };
  if (results.length === 0) {
    if (deferred.length === 0) return { kind: 'dead', reason: 'no_endpoints' };
    const lastError = deferred.map(describeDeferred).join('; ');
    return { kind: 'defer', endpoints: deferred.map((d) => d.endpoint), lastError };
  }
  const decision = decide(results);
  if (deferred.length === 0) return decision;
  const held = deferred.map((d) => d.endpoint);
  const heldError = deferred.map(describeDeferred).join('; ');
  if (decision.kind === 'retry') {
    const lastError = `${decision.lastError}; ${heldError}`;
    return { ...decision, endpoints: [...decision.endpoints, ...held], lastError };
  }
  // Every request failed permanently (a 2xx was ruled out above): only the held-back endpoints remain.
  const failed = decision.kind === 'dead' ? decision.lastError : undefined;
  return { kind: 'retry', endpoints: held, lastError: failed ? `${failed}; ${heldError}` : heldError };
}
