import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from '@sluice/service-kit';
import { errorBody, IngestError, MethodNotAllowedError, NotFoundError } from '../errors.ts';
import { TRACKING_ROUTES } from '../domain/request-body.ts';
import { handleDeletion } from './deletions-route.ts';
import type { ApiDeps } from './api-deps.ts';
import { handleTracking } from './tracking-route.ts';
import { RateLimiter } from '../domain/rate-limiter.ts';
import { traceHeadersOf, TRACING_OFF } from '@sluice/tracing';
import { tracedTracking } from './traced-tracking.ts';

export function sendJson(
  res: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/**
 * The tracking API (docs/reference/tracking-api.md) and the deletion API (docs/reference/deletions.md), one handler for
 * the service's port.
 */
export function createApiHandler(deps: ApiDeps): RequestHandler {
  const full = { ...deps, rateLimiter: deps.rateLimiter ?? new RateLimiter() };
  const tracing = deps.tracing ?? TRACING_OFF;
  return async (req: IncomingMessage, res: ServerResponse) => {
    const started = process.hrtime.bigint();
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '');
    const routeType = TRACKING_ROUTES[path];
    const route = routeType ? path : path === '/v1/deletions' ? path : 'other';
    let status = 500;
    try {
      if (route === 'other') throw new NotFoundError();
      if (req.method !== 'POST') throw new MethodNotAllowedError();
      // Ingest continues the caller's trace context only under `ingest.trustTraceContext`; otherwise
      // (the default) it starts a trace, linked to the caller's, and carries nothing of the caller's
      // on. It starts a trace too when the request carries none. No span (tracing off, or an
      // unsampled trusted caller under a parent-based sampler): a trusted context is carried onto the
      // records as it came (docs/reference/observability.md, "Tracing").
      const caller = routeType && traceHeadersOf(req.headers);
      const parent = full.config.current.ingest.trustTraceContext ? caller : undefined;
      const result = !routeType
        ? await handleDeletion(full, req)
        : (parent === undefined ? tracing.enabled : tracing.traces(parent))
          ? await tracedTracking(tracing, full, req, { route: routeType, path, parent, caller })
          : await handleTracking(full, req, routeType, parent);
      status = result.status;
      sendJson(res, status, result.body);
    } catch (err) {
      const e = err instanceof IngestError ? err : undefined;
      status = e?.status ?? 500;
      if (!e) deps.logger.error({ err, route }, 'ingest request failed');
      else if (status >= 500)
        deps.logger.warn({ code: e.code, cause: (e.cause as Error | undefined)?.message, route }, e.message);
      // After a refused upload the rest of the body is discarded unread; close so it cannot linger.
      const headers: Record<string, string> = {
        ...(e?.headers ?? {}),
        ...(req.complete ? {} : { connection: 'close' }),
      };
      sendJson(
        res,
        status,
        e ? errorBody(e) : '{"success":false,"code":"internal","message":"internal error"}',
        headers,
      );
    } finally {
      deps.metrics.requests.inc({ route, status: String(status) });
      deps.metrics.requestDuration.observe({ route }, Number(process.hrtime.bigint() - started) / 1e9);
    }
  };
}
