/**
 * A per-endpoint circuit breaker (docs/deliverer.md, "Fault isolation"). Pure: the clock is passed
 * in on every call. Only failures that hold a request for long or say the endpoint is unreachable
 * count — timeouts and connection failures; any HTTP answer, whatever its status, shows the
 * endpoint is there and answering.
 *
 * - closed: requests go; `failureThreshold` consecutive failures open it.
 * - open: nothing goes until `cooldownMs` after it opened.
 * - half-open (the cool-down is over): the first request is the probe, the others wait for it.
 *   The probe's answer closes the breaker; its failure opens it for another cool-down.
 */
export interface CircuitBreakerSettings {
  /** Consecutive timeouts or connection failures that open the breaker. */
  failureThreshold: number;
  /** How long it stays open before one probe is let through. */
  cooldownMs: number;
}

export type BreakerState =
  | { kind: 'closed'; failures: number }
  | { kind: 'open'; until: number }
  | { kind: 'half-open'; probing: boolean };

export type BreakerAdmission =
  | { kind: 'send' }
  /** The one request let through after the cool-down; its result decides. */
  | { kind: 'probe' }
  /** No request now; `until` is the earliest time the breaker may let one through. */
  | { kind: 'open'; until: number };

/**
 * What happened to a request, as the breaker sees it; `unsent` for one that failed before it was
 * sent (it could not be built), which says nothing of the endpoint.
 */
export type BreakerResult = 'answered' | 'failed' | 'unsent';

/** Which request a result is of: the half-open probe (admitted as `probe`), or any other. */
export type RequestRole = 'probe' | 'normal';

/** A state change worth telling the operator about. */
export type BreakerTransition = 'opened' | 'closed' | undefined;

export class CircuitBreaker {
  #state: BreakerState = { kind: 'closed', failures: 0 };
  #settings: CircuitBreakerSettings;

  constructor(settings: CircuitBreakerSettings) {
    this.#settings = settings;
  }

  get state(): BreakerState {
    return this.#state;
  }

  /** New settings (a config reload); they apply from the next request or failure on. */
  configure(settings: CircuitBreakerSettings): void {
    this.#settings = settings;
  }

  /** May a request go now? A `probe` answer must be followed by `record(…, true)`. */
  admit(now: number): BreakerAdmission {
    const state = this.#state;
    if (state.kind === 'closed') return { kind: 'send' };
    if (state.kind === 'open') {
      if (now < state.until) return { kind: 'open', until: state.until };
      this.#state = { kind: 'half-open', probing: true };
      return { kind: 'probe' };
    }
    if (state.probing) return { kind: 'open', until: now + this.#settings.cooldownMs };
    this.#state = { kind: 'half-open', probing: true };
    return { kind: 'probe' };
  }

  /**
   * The result of a request. Only the probe's result counts while the breaker is not closed:
   * requests sent before it opened may still be finishing, and say nothing about the endpoint now.
   */
  record(result: BreakerResult, role: RequestRole, now: number): BreakerTransition {
    const probe = role === 'probe';
    if (result === 'unsent') {
      // Nothing learnt: the failure count stays, and a probe that was never sent is given back.
      if (probe) this.cancelProbe();
      return undefined;
    }
    const state = this.#state;
    if (state.kind === 'closed') {
      if (probe) return undefined;
      if (result === 'answered') {
        if (state.failures !== 0) this.#state = { kind: 'closed', failures: 0 };
        return undefined;
      }
      const failures = state.failures + 1;
      if (failures < this.#settings.failureThreshold) {
        this.#state = { kind: 'closed', failures };
        return undefined;
      }
      this.#state = { kind: 'open', until: now + this.#settings.cooldownMs };
      return 'opened';
    }
    if (!probe || state.kind !== 'half-open') return undefined;
    if (result === 'answered') {
      this.#state = { kind: 'closed', failures: 0 };
      return 'closed';
    }
    this.#state = { kind: 'open', until: now + this.#settings.cooldownMs };
    return 'opened';
  }

  /** A probe that was admitted but never sent (its event was deferred for another reason). */
  cancelProbe(): void {
    if (this.#state.kind === 'half-open') this.#state = { kind: 'half-open', probing: false };
  }
}
