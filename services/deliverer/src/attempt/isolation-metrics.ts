import { Counter, Gauge, type Registry } from 'prom-client';
import type { EndpointGates } from './endpoint-gates.ts';

/** The deliverer's fault-isolation metrics (docs/deliverer.md, "Fault isolation"). */
export class IsolationMetrics {
  readonly deferred: Counter<'destination' | 'reason'>;
  readonly circuitOpen: Gauge<'destination' | 'endpoint' | 'state'>;
  readonly lateAttempts: Counter<'destination'>;
  readonly judged: Gauge<'destination' | 'state'>;

  constructor(registry: Registry, gates: EndpointGates) {
    const registers = [registry];
    this.deferred = new Counter({
      name: 'sluice_deliverer_deferred_total',
      help:
        'Endpoints held back for an event without a request (sent to the retry path), by reason: ' +
        'circuit_open, retry_after, rate_limited, destination_stalled',
      labelNames: ['destination', 'reason'],
      registers,
    });
    this.circuitOpen = new Gauge({
      name: 'sluice_deliverer_circuit_open',
      help: 'Endpoints whose circuit breaker is open or half-open (1), by destination, endpoint index and state',
      labelNames: ['destination', 'endpoint', 'state'],
      registers,
      collect() {
        this.reset();
        for (const e of gates.notClosed()) {
          this.set({ destination: e.destinationId, endpoint: String(e.endpoint), state: e.state }, 1);
        }
      },
    });
    this.judged = new Gauge({
      name: 'sluice_deliverer_destination_judged',
      help:
        'Destinations whose waiting events are sent to the retry path (1), by state: stalled (no request ' +
        "finished for its patience) or slow (requests take 4× the fastest destination's; its queue is bounded)",
      labelNames: ['destination', 'state'],
      registers,
    });
    this.lateAttempts = new Counter({
      name: 'sluice_deliverer_late_attempts_total',
      help: 'Requests that finished after their destination was done with the event (another endpoint answered 2xx)',
      labelNames: ['destination'],
      registers,
    });
  }
}
