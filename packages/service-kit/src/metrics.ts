import { Registry, collectDefaultMetrics } from 'prom-client';

/** A prom-client registry with process metrics and a `service` label on every series. */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry, prefix: 'sluice_' });
  return registry;
}
