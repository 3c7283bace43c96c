import { TokenBucket } from '@sluice/service-kit';
import { INVALID_REQUEST_CODE, TIMEOUT_CODE } from '@sluice/webhook';
import type { AttemptResult } from '../transport/attempt-result.ts';
import {
  CircuitBreaker,
  type BreakerResult,
  type BreakerTransition,
  type CircuitBreakerSettings,
  type RequestRole,
} from './circuit-breaker.ts';

/**
 * Why an endpoint got no request for an event; the event is handed to the retry path instead and
 * the skip is recorded on `sluice.attempts` with this as its outcome (docs/deliverer.md).
 */
export type DeferReason = 'circuit_open' | 'retry_after' | 'rate_limited' | 'destination_stalled';

export type GateDecision = { kind: 'send'; probe: boolean } | { kind: 'defer'; reason: DeferReason; until: number };

export interface EndpointGateSettings extends CircuitBreakerSettings {
  /** Requests per second allowed to the endpoint; undefined = no limit. */
  ratePerSecond?: number | undefined;
  /** Longest a `Retry-After` holds the endpoint (bounds a hostile value; the retry window). */
  maxHoldMs: number;
}

/**
 * How the breaker counts a result: only timeouts and connection failures are failures; a request
 * that could not be built (`invalid_request`) was never sent and does not count at all, nor does a
 * timeout that spent most of its time waiting for one of this process's own pooled connections
 * (more requests in flight than `delivery.connectionsPerEndpoint`): the endpoint had it for less
 * than half of it, which says more of this process's load than of the endpoint. An endpoint that
 * hangs still opens its breaker: the requests holding its connections time out on the wire.
 */
export function breakerResult(
  result: Pick<AttemptResult, 'outcome' | 'status' | 'error' | 'connectionWaitMs'> & { latencyMs?: number },
): BreakerResult {
  if (result.error === INVALID_REQUEST_CODE) return 'unsent';
  if (result.error === TIMEOUT_CODE && (result.connectionWaitMs ?? 0) * 2 > (result.latencyMs ?? 0)) return 'unsent';
  return result.outcome === 'retryable' && result.status === undefined ? 'failed' : 'answered';
}

/**
 * Whether one endpoint may get a request now (pure; the clock is passed in). Three things hold an
 * endpoint back: a `Retry-After` it sent (until then, never earlier), its circuit breaker, and its
 * optional rate limit (a token bucket of `ratePerSecond` with a burst of one second's worth).
 * Deferred events get the time they may come back: the end of the hold, the breaker's next probe,
 * or for the rate limit a turn after those already deferred, so they return spread at the rate.
 */
export class EndpointGate {
  readonly breaker: CircuitBreaker;
  #settings: EndpointGateSettings;
  #holdUntil = 0;
  /** Made at the first request under a rate limit, full; it keeps its tokens across rate changes. */
  #bucket: TokenBucket | undefined;
  #reservedUntil = 0;

  constructor(settings: EndpointGateSettings) {
    this.#settings = settings;
    this.breaker = new CircuitBreaker(settings);
  }

  configure(settings: EndpointGateSettings): void {
    this.#settings = settings;
    this.breaker.configure(settings);
  }

  /** The end of the `Retry-After` hold in force (0 when none). */
  get holdUntil(): number {
    return this.#holdUntil;
  }

  admit(now: number): GateDecision {
    if (now < this.#holdUntil) return { kind: 'defer', reason: 'retry_after', until: this.#holdUntil };
    const bucket = this.#rateBucket(now);
    if (bucket !== undefined) {
      if (this.#reservedUntil < now) this.#reservedUntil = 0;
      const waitMs = bucket.shortfallMs(1, now);
      if (waitMs > 0) {
        const next = Math.max(now + waitMs, this.#reservedUntil);
        this.#reservedUntil = next + 1_000 / bucket.perSecond;
        return { kind: 'defer', reason: 'rate_limited', until: Math.ceil(next) };
      }
    }
    const admission = this.breaker.admit(now);
    if (admission.kind === 'open') return { kind: 'defer', reason: 'circuit_open', until: admission.until };
    bucket?.take(1, now);
    return { kind: 'send', probe: admission.kind === 'probe' };
  }

  /** An admitted request that was not sent after all: its token and its probe are given back. */
  cancel(decision: { probe: boolean }): void {
    if (this.#settings.ratePerSecond !== undefined) this.#bucket?.refund(1);
    if (decision.probe) this.breaker.cancelProbe();
  }

  /** The result of a request this gate admitted. */
  record(
    result: Pick<AttemptResult, 'outcome' | 'status' | 'retryAfterMs' | 'error' | 'connectionWaitMs'> & {
      latencyMs?: number;
    },
    role: RequestRole,
    now: number,
  ): BreakerTransition {
    if (result.retryAfterMs !== undefined && result.retryAfterMs > 0) {
      this.#holdUntil = Math.max(this.#holdUntil, now + Math.min(result.retryAfterMs, this.#settings.maxHoldMs));
    }
    return this.breaker.record(breakerResult(result), role, now);
  }

  /** The endpoint's token bucket (`ratePerSecond`, a burst of one second's worth), or none without a rate limit. */
  #rateBucket(now: number): TokenBucket | undefined {
    const rate = this.#settings.ratePerSecond;
    if (rate === undefined) return undefined;
    const burst = Math.max(1, Math.ceil(rate));
    if (this.#bucket === undefined) this.#bucket = new TokenBucket(rate, burst, now);
    else if (this.#bucket.perSecond !== rate) this.#bucket.setRate(rate, burst);
    return this.#bucket;
  }
}
