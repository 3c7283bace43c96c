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
      // Ingest starts a trace when the request carries none. No span (tracing off, or an unsampled
      // caller under a parent-based sampler): a received trace context is carried onto the records as
      // it came (docs/reference/observability.md, "Tracing").
      const trace = routeType && traceHeadersOf(req.headers);
      const result = !routeType
        ? await handleDeletion(full, req)
        : (trace === undefined ? tracing.enabled : tracing.traces(trace))
          ? await tracedTracking(tracing, full, req, routeType, path, trace)
          : await handleTracking(full, req, routeType, trace);
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
