import type { SluiceConfig } from '@sluice/config';
import { cutPage, encodeCursor } from '../../domain/cursor.ts';
import { LIST_PARAMS, parseListQuery, parseStreamLimit, parseWindow } from '../../domain/query.ts';
import type { LogReader } from '../db/read-store.ts';
import { badRequest, HttpError, pathId, type Route } from './http-io.ts';
import { heldToDestination, scopeOf, unseen } from './tenant-scope.ts';

/** What the read routes need: the log, and for the health window the config in force and the clock. */
export interface ReadRouteDeps {
  store: LogReader;
  config: () => SluiceConfig;
  now: () => number;
}

/** `GET /api/v1/messages`: a page of messages matching the filter, and the cursor of the next one. */
function listMessages({ store, config }: ReadRouteDeps): Route {
  return {
    method: 'GET',
    pattern: /^\/api\/v1\/messages$/,
    name: 'listMessages',
    params: LIST_PARAMS,
    run: async (_m, url, req) => {
      const q = parseListQuery(url.searchParams);
      if (!q.ok) throw badRequest(q);
      const { limit, cursor, ...filter } = q.value;
      const scope = scopeOf(req, config());
      const { sourceIds, onlyDestination } = scope;
      // A portal link limited to one destination lists the messages routed to it, and only them.
      if (onlyDestination !== undefined && (filter.destinationId ?? onlyDestination) !== onlyDestination)
        return [200, { messages: [], nextCursor: null }];
      const rows = await store.listMessages(
        {
          ...filter,
          ...(sourceIds !== undefined && { sourceIds }),
          ...(onlyDestination !== undefined && { destinationId: onlyDestination }),
        },
        limit,
        cursor,
      );
      const { page, nextCursor } = cutPage(rows, {
        limit,
        cursorOf: (last) =>
          encodeCursor({ receivedAt: Date.parse(last.receivedAt), sourceId: last.sourceId, messageId: last.messageId }),
      });
      return [200, { messages: page.map((row) => heldToDestination(scope, row)), nextCursor }];
    },
  };
}

/** `GET /api/v1/messages/{sourceId}/{messageId}`: one message with its deliveries, attempts and replays. */
function getMessage({ store, config }: ReadRouteDeps): Route {
  return {
    method: 'GET',
    pattern: /^\/api\/v1\/messages\/([^/]+)\/([^/]+)$/,
    name: 'getMessage',
    params: [],
    run: async (m, _url, req) => {
      const sourceId = pathId('sourceId', m[1]!);
      const messageId = pathId('messageId', m[2]!);
      const scope = scopeOf(req, config());
      const message = scope.seesSource(sourceId) ? await store.message(sourceId, messageId) : undefined;
      if (!message) throw new HttpError(404, 'not_found', 'no such message in the log');
      return [200, heldToDestination(scope, message)];
    },
  };
}

/** `GET /api/v1/batches/{batchId}`: the view of one batch. */
function getBatch({ store, config }: ReadRouteDeps): Route {
  return {
    method: 'GET',
    pattern: /^\/api\/v1\/batches\/([^/]+)$/,
    name: 'getBatch',
    params: [],
    run: async (m, _url, req) => {
      const batch = await store.batch(pathId('batchId', m[1]!));
      const scope = scopeOf(req, config());
      if (!batch?.events.every((e) => scope.seesDestination(e.destinationId)))
        throw new HttpError(404, 'not_found', 'no attempt in the log names this batch');
      return [200, batch];
    },
  };
}

/** `GET /api/v1/destinations/{destinationId}/health`: each endpoint's attempts over a window. */
function endpointHealth(deps: ReadRouteDeps): Route {
  return {
    method: 'GET',
    pattern: /^\/api\/v1\/destinations\/([^/]+)\/health$/,
    name: 'endpointHealth',
    params: ['window'],
    run: async (m, url, req) => {
      const destinationId = pathId('destinationId', m[1]!);
      if (!scopeOf(req, deps.config()).seesDestination(destinationId))
        throw unseen('no destination of the config has this id');
      const w = parseWindow(url.searchParams.get('window'), deps.config().deliveryLog.healthWindowMs);
      if (!w.ok) throw badRequest(w);
      const since = deps.now() - w.value;
      return [
        200,
        {
          windowMs: w.value,
          since: new Date(since).toISOString(),
          endpoints: await deps.store.endpointHealth(since, destinationId),
        },
      ];
    },
  };
}

/** `GET /api/v1/sources/{sourceId}/events`: a source's newest events. */
function recentEvents({ store, config }: ReadRouteDeps): Route {
  return {
    method: 'GET',
    pattern: /^\/api\/v1\/sources\/([^/]+)\/events$/,
    name: 'recentEvents',
    params: ['limit'],
    run: async (m, url, req) => {
      const sourceId = pathId('sourceId', m[1]!);
      if (!scopeOf(req, config()).seesSource(sourceId)) throw unseen('no source of the config has this id');
      const limit = parseStreamLimit(url.searchParams);
      if (!limit.ok) throw badRequest(limit);
      return [200, { events: await store.recentEvents(sourceId, limit.value) }];
    },
  };
}

/** The routes that read the log: messages, a message, a batch, endpoint health, a source's live events. */
export function readRoutes(deps: ReadRouteDeps): Route[] {
  return [listMessages(deps), getMessage(deps), getBatch(deps), endpointHealth(deps), recentEvents(deps)];
}
