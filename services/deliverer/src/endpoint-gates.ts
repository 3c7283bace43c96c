import type { Destination, Endpoint, SluiceConfig } from '@sluice/config';
import type { Logger } from '@sluice/logging';
import type { AttemptResult } from './domain/attempt-result.ts';
import { EndpointGate, type EndpointGateSettings, type GateDecision } from './domain/endpoint-gate.ts';

interface Entry {
  gate: EndpointGate;
  destinationId: string;
  /** Position of the endpoint in its destination: the metric label (URLs may carry secrets). */
  index: number;
  origin: string;
}

/**
 * The gate of every endpoint this process delivers to (circuit breaker, `Retry-After` hold, rate
 * limit), keyed by destination and URL. State is per process: each deliverer replica learns an
 * endpoint's health from its own requests. Breaker changes are logged with the endpoint's origin
 * only (its path and query may carry a token).
 */
export class EndpointGates {
  readonly #entries = new Map<string, Entry>();
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  admit(destination: Destination, endpoint: Endpoint, config: SluiceConfig, now: number): GateDecision {
    return this.#entry(destination, endpoint, config).gate.admit(now);
  }

  cancel(destinationId: string, url: string, decision: { probe: boolean }): void {
    this.#entries.get(key(destinationId, url))?.gate.cancel(decision);
  }

  record(destinationId: string, result: AttemptResult, probe: boolean, now: number): void {
    const entry = this.#entries.get(key(destinationId, result.endpoint));
    if (!entry) return;
    const transition = entry.gate.record(result, probe, now);
    if (transition === 'opened') {
      const state = entry.gate.breaker.state;
      const until = state.kind === 'open' ? new Date(state.until).toISOString() : undefined;
      this.#logger.warn(
        { destinationId, endpoint: entry.index, origin: entry.origin, error: result.error, until },
        'endpoint circuit open: its events are deferred without a request until a probe gets an answer',
      );
    } else if (transition === 'closed') {
      this.#logger.info({ destinationId, endpoint: entry.index, origin: entry.origin }, 'endpoint circuit closed: the probe got an answer');
    }
  }

  /** Drops the gates of endpoints no longer configured (after a reload). */
  retain(config: SluiceConfig): void {
    const keep = new Set<string>();
    for (const d of config.destinations) for (const e of d.endpoints) keep.add(key(d.id, e.url));
    for (const k of this.#entries.keys()) if (!keep.has(k)) this.#entries.delete(k);
  }

  /** Endpoints whose breaker is not closed, for the metric read at scrape time. */
  *notClosed(): Iterable<{ destinationId: string; endpoint: number; state: 'open' | 'half-open' }> {
    for (const entry of this.#entries.values()) {
      const { kind } = entry.gate.breaker.state;
      if (kind !== 'closed') yield { destinationId: entry.destinationId, endpoint: entry.index, state: kind };
    }
  }

  #entry(destination: Destination, endpoint: Endpoint, config: SluiceConfig): Entry {
    const k = key(destination.id, endpoint.url);
    const settings = gateSettings(endpoint, config);
    let entry = this.#entries.get(k);
    if (!entry) {
      entry = { gate: new EndpointGate(settings), destinationId: destination.id, index: destination.endpoints.indexOf(endpoint), origin: originOf(endpoint.url) };
      this.#entries.set(k, entry);
    } else {
      entry.gate.configure(settings);
    }
    return entry;
  }
}

function gateSettings(endpoint: Endpoint, config: SluiceConfig): EndpointGateSettings {
  const { circuitBreaker } = config.delivery;
  return {
    failureThreshold: circuitBreaker.failures,
    cooldownMs: circuitBreaker.cooldownMs,
    ratePerSecond: endpoint.maxRequestsPerSecond,
    maxHoldMs: config.retry.windowMs,
  };
}

function key(destinationId: string, url: string): string {
  return `${destinationId}\u0000${url}`;
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'invalid';
  }
}
