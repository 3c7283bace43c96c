import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';

/** A readiness check: resolves true when that dependency is usable (docs/reference/observability.md `/readyz`). */
export type ReadinessCheck = () => boolean | Promise<boolean>;

export interface OpsRoutes {
  registry: Registry;
  /** Named checks; `/readyz` answers 200 only when all pass, and lists them either way. */
  readiness: Record<string, ReadinessCheck>;
  /** Serve `/metrics` on this server (default true; false where it lives on an admin port). */
  metrics?: boolean;
  /** What the service waits for while it starts: named in `/readyz`'s body as `waitingFor`. */
  waitingFor?: () => string | undefined;
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(body);
}

/**
 * Serves `/metrics`, `/healthz` and `/readyz`. Returns false for other paths so a service with
 * its own API (ingest, audience-sync) can serve both on one port.
 */
export async function handleOpsRequest(routes: OpsRoutes, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/healthz') {
    send(res, 200, 'application/json', '{"status":"ok"}');
    return true;
  }
  if (path === '/readyz') {
    const results: Record<string, boolean> = {};
    for (const [name, check] of Object.entries(routes.readiness)) {
      try {
        results[name] = await check();
      } catch {
        results[name] = false;
      }
    }
    const ready = Object.values(results).every(Boolean);
    const waitingFor = routes.waitingFor?.();
    const body = { ready, checks: results, ...(waitingFor !== undefined && { waitingFor }) };
    send(res, ready ? 200 : 503, 'application/json', JSON.stringify(body));
    return true;
  }
  if (path === '/metrics' && routes.metrics !== false) {
    send(res, 200, routes.registry.contentType, await routes.registry.metrics());
    return true;
  }
  return false;
}
