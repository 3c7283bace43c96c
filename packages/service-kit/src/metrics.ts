import { Counter, Registry, collectDefaultMetrics } from 'prom-client';
import { droppedTraceHeaders } from '@sluice/tracing';

/**
 * A prom-client registry with Node's process metrics under their usual names (`process_*`,
 * `nodejs_*`, as community dashboards expect) and a `sluice_service` label on every series:
 * `service` is left to the scrape target (Kubernetes service discovery sets it), so neither
 * overwrites the other (docs/reference/observability.md). It also counts the trace headers this
 * process dropped as invalid (`sluice_trace_headers_dropped_total{header}`), whatever read them.
 */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ sluice_service: service });
  collectDefaultMetrics({ register: registry });
  new Counter({
    name: 'sluice_trace_headers_dropped_total',
    help: 'traceparent and tracestate headers (of requests and records) dropped as invalid W3C Trace Context',
    labelNames: ['header'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [header, count] of Object.entries(droppedTraceHeaders())) this.inc({ header }, count);
    },
  });
  return registry;
}
