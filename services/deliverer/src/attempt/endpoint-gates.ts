import type { Destination, Endpoint, SluiceConfig } from '@sluice/config';
import type { Logger } from '@sluice/logging';
import type { AttemptResult } from '../transport/attempt-result.ts';
import { EndpointGate, type EndpointGateSettings, type GateDecision } from './endpoint-gate.ts';

/** What the gate of each endpoint of one destination's part is asked with. */
export interface AdmissionContext {
  destination: Destination;
  /** The config the part is delivered under (a gate's settings follow it after a reload). */
  config: SluiceConfig;
  now: number;
}

/** The request a result is of, as `EndpointGates.record` is told. */
export interface RecordedRequest {
  destinationId: string;
  /** It was the breaker's half-open probe (`GateDecision.probe`). */
  probe: boolean;
  /** When its result came. */
  now: number;
}

interface Entry {
  gate: EndpointGate;
  /** The config the gate's settings were taken from (re-read after a reload). */
  config: SluiceConfig;
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
  /** Destination id → endpoint URL → entry (no key string built per request). */
  readonly #entries = new Map<string, Map<string, Entry>>();
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  admit(endpoint: Endpoint, context: AdmissionContext): GateDecision {
    return this.#entry(context.destination, endpoint, context.config).gate.admit(context.now);
  }

  cancel(destinationId: string, url: string, decision: { probe: boolean }): void {
    this.#entries.get(destinationId)?.get(url)?.gate.cancel(decision);
  }

  record(result: AttemptResult, request: RecordedRequest): void {
    const { destinationId } = request;
    const entry = this.#entries.get(destinationId)?.get(result.endpoint);
    if (!entry) return;
    const transition = entry.gate.record(result, request.probe ? 'probe' : 'normal', request.now);
    if (transition === 'opened') {
      const state = entry.gate.breaker.state;
      const until = state.kind === 'open' ? new Date(state.until).toISOString() : undefined;
      this.#logger.warn(
        { destinationId, endpoint: entry.index, origin: entry.origin, error: result.error, until },
        'endpoint circuit open: its events are deferred without a request until a probe gets an answer',
      );
    } else if (transition === 'closed') {
      const fields = { destinationId, endpoint: entry.index, origin: entry.origin };
      this.#logger.info(fields, 'endpoint circuit closed: the probe got an answer');
    }
  }

  /** Drops the gates of endpoints no longer configured (after a reload). */
  retain(config: SluiceConfig): void {
    for (const [destinationId, endpoints] of this.#entries) {
      const destination = config.destinations.find((d) => d.id === destinationId);
      for (const url of endpoints.keys()) if (!destination?.endpoints.some((e) => e.url === url)) endpoints.delete(url);
      if (endpoints.size === 0) this.#entries.delete(destinationId);
    }
  }

  /** Endpoints whose breaker is not closed, for the metric read at scrape time. */
  *notClosed(): Iterable<{ destinationId: string; endpoint: number; state: 'open' | 'half-open' }> {
    for (const endpoints of this.#entries.values()) {
      for (const entry of endpoints.values()) {
        const { kind } = entry.gate.breaker.state;
        if (kind !== 'closed') yield { destinationId: entry.destinationId, endpoint: entry.index, state: kind };
      }
    }
  }

  #entry(destination: Destination, endpoint: Endpoint, config: SluiceConfig): Entry {
    let endpoints = this.#entries.get(destination.id);
    if (!endpoints) this.#entries.set(destination.id, (endpoints = new Map()));
    let entry = endpoints.get(endpoint.url);
    if (!entry) {
      entry = {
        gate: new EndpointGate(gateSettings(endpoint, config)),
        config,
        destinationId: destination.id,
        index: destination.endpoints.indexOf(endpoint),
        origin: originOf(endpoint.url),
      };
      endpoints.set(endpoint.url, entry);
    } else if (entry.config !== config) {
      entry.config = config;
      entry.index = destination.endpoints.indexOf(endpoint);
      entry.gate.configure(gateSettings(endpoint, config));
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

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'invalid';
  }
}
