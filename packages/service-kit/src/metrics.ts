import { Registry, collectDefaultMetrics } from 'prom-client';

/**
 * A prom-client registry with Node's process metrics under their usual names (`process_*`,
 * `nodejs_*`, as community dashboards expect) and a `sluice_service` label on every series:
 * `service` is left to the scrape target (Kubernetes service discovery sets it), so neither
 * overwrites the other (docs/reference/observability.md).
 */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ sluice_service: service });
  collectDefaultMetrics({ register: registry });
  return registry;
}
