import type { IncomingMessage } from 'node:http';
import type { SluiceConfig } from '@sluice/config';
import { checkId, parseReplayFilter } from '../../domain/query.ts';
import type { DeliveryLogMetrics } from '../../metrics.ts';
import type { LogReader, MessageView } from '../db/read-store.ts';
import { NotReplayableError, type ReplayCounts, ReplayTooLargeError, type Replayer } from '../kafka/replayer.ts';
import { badRequest, HttpError, pathId, readJson, type Route } from './http-io.ts';
import { aimOf, scopeOf } from './tenant-scope.ts';

/** What the replay routes need: the log to find a message in, the replayer, and the replay counter. */
export interface ReplayRouteDeps {
  store: LogReader;
  /** The config in force: which destinations and sources a tenant token sees. */
  config: () => SluiceConfig;
  replayer: Replayer;
  metrics: DeliveryLogMetrics;
}

/** The optional `destinationId` of a message replay's body (a JSON object with no other field), checked. */
async function replayDestination(req: IncomingMessage): Promise<string | undefined> {
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
  return dest.value;
}

/** The destinations of a message whose delivery is in `state`, only `dest` when one is named. */
function destinationsIn(message: MessageView, state: string, dest: string | undefined): string[] {
  return message.deliveries
    .filter((d) => d.state === state && d.destinationId !== null && (dest === undefined || d.destinationId === dest))
    .map((d) => d.destinationId!);
}

/** The answer of a replay, counted in the replay metric. */
function replayAnswer(metrics: DeliveryLogMetrics, result: ReplayCounts): [number, unknown] {
  metrics.replayed.inc(result.replayed);
  return [
    202,
    { matched: result.matched, replayed: result.replayed, skippedAlreadyReplayed: result.skippedAlreadyReplayed },
  ];
}

/** `POST /api/v1/messages/{sourceId}/{messageId}/replay`: its dead deliveries re-injected, delivered ones sent again. */
function replayMessage(deps: ReplayRouteDeps): Route {
  return {
    method: 'POST',
    pattern: /^\/api\/v1\/messages\/([^/]+)\/([^/]+)\/replay$/,
    name: 'replayMessage',
    params: [],
    run: async (m, _url, req) => {
      const sourceId = pathId('sourceId', m[1]!);
      const messageId = pathId('messageId', m[2]!);
      const scope = scopeOf(req, deps.config());
      // A portal link limited to one destination replays to that one only.
      const dest = (await replayDestination(req)) ?? scope.onlyDestination;
      const seen =
        scope.seesSource(sourceId) && (scope.onlyDestination === undefined || dest === scope.onlyDestination);
      const message = seen ? await deps.store.message(sourceId, messageId) : undefined;
      if (!message) throw new HttpError(404, 'not_found', 'no such message in the log');
      const dead = destinationsIn(message, 'dead', dest);
      const delivered = destinationsIn(message, 'delivered', dest);
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
      return replayAnswer(deps.metrics, result);
    },
  };
}

/** `POST /api/v1/replays`: the dead letters a filter matches, replayed. */
function replayFilter(deps: ReplayRouteDeps): Route {
  return {
    method: 'POST',
    pattern: /^\/api\/v1\/replays$/,
    name: 'replayFilter',
    params: [],
    run: async (_m, _url, req) => {
      const f = parseReplayFilter(await readJson(req));
      if (!f.ok) throw badRequest(f);
      const scope = scopeOf(req, deps.config());
      // A portal link limited to one destination replays that one's dead letters only.
      const filter = { ...f.value, destinationId: f.value.destinationId ?? scope.onlyDestination };
      // Another tenant's, as one that does not exist: nothing matches.
      if (aimOf(scope, filter) === 'unseen')
        return replayAnswer(deps.metrics, { matched: 0, replayed: 0, skippedAlreadyReplayed: 0 });
      try {
        return replayAnswer(deps.metrics, await deps.replayer.replayFilter(filter));
      } catch (err) {
        if (err instanceof ReplayTooLargeError) throw new HttpError(413, err.code, err.message);
        throw err;
      }
    },
  };
}

/** The replay routes: one message, and the dead letters of a filter. */
export function replayRoutes(deps: ReplayRouteDeps): Route[] {
  return [replayMessage(deps), replayFilter(deps)];
}
