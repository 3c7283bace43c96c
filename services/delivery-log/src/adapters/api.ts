import { randomUUID } from 'node:crypto';
import type { SluiceConfig } from '@sluice/config';
import type { Logger } from '@sluice/logging';
import type { RequestHandler } from '@sluice/service-kit';
import { encodeCursor } from '../domain/cursor.ts';
import {
  checkId,
  checkParams,
  LIST_PARAMS,
  parseListQuery,
  parseReplayFilter,
  parseStreamLimit,
  parseWindow,
} from '../domain/query.ts';
import type { DeliveryLogMetrics } from '../metrics.ts';
import { bearerMatches } from './auth.ts';
import { serveConsole } from './console-assets.ts';
import { controlRoutes } from './control-routes.ts';
import { ledgerRoutes } from './ledger.ts';
import type { DestinationControl } from './destination-control.ts';
import { badRequest, HttpError, pathId, readJson, type Route, send } from './http-io.ts';
import { openApiDocument } from './openapi.ts';
import { NotReplayableError, type ReplayCounts, ReplayTooLargeError, type Replayer } from './replayer.ts';
import type { LogReader } from './read-store.ts';

export interface ApiDeps {
  store: LogReader;
  replayer: Replayer;
  config: () => SluiceConfig;
  metrics: DeliveryLogMetrics;
  now: () => number;
  /** Every 5xx is logged here with its request id. */
  logger: Logger;
  /** Runtime state of destinations and endpoints, and the actions on them. */
  control: DestinationControl;
}

/** Header of the request id: taken from the request when it is a sane one, else made; sent back on every API answer. */
const REQUEST_ID_HEADER = 'x-request-id';
const SANE_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * The delivery-log HTTP API (docs/delivery-log.md, `/openapi.json`) and the console. Every `/api/`
 * route needs `Authorization: Bearer <deliveryLog.adminToken>`; without a configured token they
 * answer 404. Every input is checked (bounded ids, closed sets, bounded pages) and refused with a 4xx
 * naming the field.
 */
export function createApiHandler(deps: ApiDeps): RequestHandler {
  const { store } = deps;
  const routes: Route[] = [
    ...controlRoutes({ store, control: deps.control, config: deps.config }),
    ...ledgerRoutes({ store, now: deps.now, config: deps.config, control: deps.control }),
    {
      method: 'GET',
      pattern: /^\/api\/v1\/messages$/,
      name: 'listMessages',
      params: LIST_PARAMS,
      run: async (_m, url) => {
        const q = parseListQuery(url.searchParams);
        if (!q.ok) throw badRequest(q);
        const { limit, cursor, ...filter } = q.value;
        const rows = await store.listMessages(filter, limit, cursor);
        const page = rows.slice(0, limit);
        const last = page.at(-1);
        const nextCursor =
          rows.length > limit && last
            ? encodeCursor({
                receivedAt: Date.parse(last.receivedAt),
                sourceId: last.sourceId,
                messageId: last.messageId,
              })
            : null;
        return [200, { messages: page, nextCursor }];
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/v1\/messages\/([^/]+)\/([^/]+)$/,
      name: 'getMessage',
      params: [],
      run: async (m) => {
        const message = await store.message(pathId('sourceId', m[1]!), pathId('messageId', m[2]!));
        if (!message) throw new HttpError(404, 'not_found', 'no such message in the log');
        return [200, message];
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/v1\/batches\/([^/]+)$/,
      name: 'getBatch',
      params: [],
      run: async (m) => {
        const batch = await store.batch(pathId('batchId', m[1]!));
        if (!batch) throw new HttpError(404, 'not_found', 'no attempt in the log names this batch');
        return [200, batch];
      },
    },
    {
      method: 'POST',
      pattern: /^\/api\/v1\/messages\/([^/]+)\/([^/]+)\/replay$/,
      name: 'replayMessage',
      params: [],
      run: async (m, _url, req) => {
        const sourceId = pathId('sourceId', m[1]!);
        const messageId = pathId('messageId', m[2]!);
        const body = await readJson(req);
        if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
          throw new HttpError(400, 'invalid_body', 'the body must be a JSON object');
        }
        const fields = (body ?? {}) as Record<string, unknown>;
        for (const key of Object.keys(fields))
          if (key !== 'destinationId')
            throw new HttpError(400, 'invalid_parameter', `${key} is not a field of this route`, key);
        const dest = checkId(
          'destinationId',
          fields.destinationId === undefined
            ? undefined
            : typeof fields.destinationId === 'string'
              ? fields.destinationId
              : '',
        );
        if (!dest.ok) throw badRequest(dest);
        const message = await store.message(sourceId, messageId);
        if (!message) throw new HttpError(404, 'not_found', 'no such message in the log');
        const at = (state: string) =>
          message.deliveries
            .filter(
              (d) =>
                d.state === state &&
                d.destinationId !== null &&
                (dest.value === undefined || d.destinationId === dest.value),
            )
            .map((d) => d.destinationId!);
        const dead = at('dead');
        const delivered = at('delivered');
        if (dead.length + delivered.length === 0) {
          throw new HttpError(
            409,
            'not_replayable',
            'no delivery of this message is dead or delivered (one in flight is not replayed)',
          );
        }
        let result: ReplayCounts;
        try {
          result = await deps.replayer.replayMessage(message, dead, delivered);
        } catch (err) {
          if (err instanceof NotReplayableError) throw new HttpError(409, err.code, err.message);
          throw err;
        }
        deps.metrics.replayed.inc(result.replayed);
        return [
          202,
          { matched: result.matched, replayed: result.replayed, skippedAlreadyReplayed: result.skippedAlreadyReplayed },
        ];
      },
    },
    {
      method: 'POST',
      pattern: /^\/api\/v1\/replays$/,
      name: 'replayFilter',
      params: [],
      run: async (_m, _url, req) => {
        const f = parseReplayFilter(await readJson(req));
        if (!f.ok) throw badRequest(f);
        try {
          const result = await deps.replayer.replayFilter(f.value);
          deps.metrics.replayed.inc(result.replayed);
          return [
            202,
            {
              matched: result.matched,
              replayed: result.replayed,
              skippedAlreadyReplayed: result.skippedAlreadyReplayed,
            },
          ];
        } catch (err) {
          if (err instanceof ReplayTooLargeError) throw new HttpError(413, err.code, err.message);
          throw err;
        }
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/v1\/destinations\/([^/]+)\/health$/,
      name: 'endpointHealth',
      params: ['window'],
      run: async (m, url) => {
        const destinationId = pathId('destinationId', m[1]!);
        const w = parseWindow(url.searchParams.get('window'), deps.config().deliveryLog.healthWindowMs);
        if (!w.ok) throw badRequest(w);
        const since = deps.now() - w.value;
        return [
          200,
          {
            windowMs: w.value,
            since: new Date(since).toISOString(),
            endpoints: await store.endpointHealth(since, destinationId),
          },
        ];
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/v1\/sources\/([^/]+)\/events$/,
      name: 'recentEvents',
      params: ['limit'],
      run: async (m, url) => {
        const sourceId = pathId('sourceId', m[1]!);
        const limit = parseStreamLimit(url.searchParams);
        if (!limit.ok) throw badRequest(limit);
        return [200, { events: await store.recentEvents(sourceId, limit.value) }];
      },
    },
  ];

  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://delivery-log');
    if (req.method === 'GET' && url.pathname === '/openapi.json') return send(res, 200, openApiDocument);
    if (!url.pathname.startsWith('/api/')) {
      if (await serveConsole(url.pathname, req, res)) return;
      return send(res, 404, { code: 'not_found', message: 'no such route' });
    }
    const token = deps.config().deliveryLog.adminToken;
    const given = req.headers[REQUEST_ID_HEADER];
    const requestId = typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader(REQUEST_ID_HEADER, requestId);
    let name = 'unknown';
    let status = 500;
    try {
      if (token === undefined) throw new HttpError(404, 'not_found', 'the API is off: set deliveryLog.adminToken');
      if (!bearerMatches(req.headers.authorization, token))
        throw new HttpError(401, 'unauthorized', 'a valid bearer token is required');
      const matching = routes.filter((r) => r.pattern.test(url.pathname));
      if (matching.length === 0) throw new HttpError(404, 'not_found', 'no such route');
      const route = matching.find((r) => r.method === req.method);
      if (!route) throw new HttpError(405, 'method_not_allowed', `use ${matching.map((r) => r.method).join(', ')}`);
      name = route.name;
      const unknown = checkParams(url.searchParams, route.params);
      if (unknown) throw badRequest(unknown);
      const [code, body] = await route.run(route.pattern.exec(url.pathname)!, url, req);
      status = code;
      send(res, code, body);
    } catch (err) {
      if (!(err instanceof HttpError)) {
        status = 500;
        deps.logger.error(
          { err, requestId, route: name, method: req.method, path: url.pathname },
          'delivery-log API request failed',
        );
        if (res.headersSent) return void res.end();
        return send(res, 500, {
          code: 'internal',
          message: `internal error; the log has it under request id ${requestId}`,
          requestId,
        });
      }
      status = err.status;
      if (err.status === 401) res.setHeader('www-authenticate', 'Bearer');
      send(res, err.status, {
        code: err.code,
        message: err.message,
        ...(err.field !== undefined && { field: err.field }),
      });
    } finally {
      deps.metrics.requests.inc({ route: name, status: String(status) });
    }
  };
}
