import type { IncomingMessage } from 'node:http';
import { LIMITS, type SluiceConfig } from '@sluice/config';
import { actorOf } from './caller.ts';
import { auditedIds, type DeletedIds, scopeOf } from './tenant-scope.ts';
import { DEFAULT_ACTIONS_PAGE, MAX_ACTIONS_PAGE, MAX_REASON_LENGTH } from '../../constants.ts';
import { checkId, checkInt } from '../../domain/query.ts';
import {
  CONTROL_ACTIONS,
  type ControlAction,
  type DestinationControl,
  type StateValue,
} from '../kafka/destination-control.ts';
import { badRequest, HttpError, pathId, readJson, type Route } from './http-io.ts';
import type { LogReader } from '../db/read-store.ts';
import type { ActionLog } from '../db/action-log.ts';

export interface ControlRouteDeps {
  store: LogReader;
  control: DestinationControl;
  /** The recorded actions, in the log's database. */
  actions: Pick<ActionLog, 'page'>;
  config: () => SluiceConfig;
  /** The runtime destinations' ids deleted, by tenant; undefined when runtime destinations are off. */
  deletedIn: DeletedIds | undefined;
}

/** A state as the API shows it: `since` is when it was set; never set reads as active. */
export function stateView(value: StateValue | undefined) {
  return {
    state: value?.state ?? 'active',
    reason: value?.reason ?? null,
    by: value?.by ?? null,
    since: value?.at ?? null,
    auto: value?.auto === true,
  };
}

/**
 * The reason of an action's body. A `by` it still carries (clients written when the API had one
 * token sent one) is checked as before but not used: an action is recorded by the token's name.
 */
function actionBody(raw: unknown): { reason: string } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new HttpError(400, 'invalid_body', 'the body must be a JSON object with a reason');
  const fields = raw as Record<string, unknown>;
  for (const key of Object.keys(fields))
    if (key !== 'reason' && key !== 'by')
      throw new HttpError(400, 'invalid_parameter', `${key} is not a field of this route`, key);
  const { reason, by } = fields;
  if (typeof reason !== 'string' || reason.trim() === '' || reason.length > MAX_REASON_LENGTH)
    throw new HttpError(400, 'invalid_parameter', `reason must be 1–${MAX_REASON_LENGTH} characters`, 'reason');
  if (by !== undefined) {
    const c = checkId('by', typeof by === 'string' ? by : '');
    if (!c.ok) throw badRequest(c);
  }
  return { reason };
}

const ACTION = `(${CONTROL_ACTIONS.join('|')})`;

/** `GET /api/v1/destinations`: each destination of the config with its delivery states and runtime state. */
function listDestinations({ store, control, config }: ControlRouteDeps): Route {
  return {
    method: 'GET',
    pattern: /^\/api\/v1\/destinations$/,
    name: 'listDestinations',
    params: [],
    run: async (_m, _url, req) => {
      const counts = await store.destinationStates();
      const scope = scopeOf(req, config());
      const destinations = config()
        .destinations.filter((d) => scope.seesDestination(d.id))
        .map((d) => ({
          id: d.id,
          name: d.name,
          tenant: d.tenant,
          enabled: d.enabled,
          sourceIds: d.sourceIds,
          // The redacted names records carry (URLs may hold credentials), never the URLs themselves.
          endpoints: d.endpoints.map((e) => e.ref),
          states: Object.fromEntries(counts.filter((c) => c.destinationId === d.id).map((c) => [c.state, c.count])),
          state: stateView(control.get(d.id)),
          endpointStates: d.endpoints.map((e) => ({ ref: e.ref, ...stateView(control.get(d.id, e.ref)) })),
        }));
      return [200, { destinations }];
    },
  };
}

/**
 * `GET /api/v1/destination-actions`: the recorded actions, newest first, a page at a time; a
 * tenant's (its destinations' ids) chosen in the database's statement, so its page is full
 * whenever more of its actions follow.
 */
function listDestinationActions({ actions, config, deletedIn }: ControlRouteDeps): Route {
  return {
    method: 'GET',
    pattern: /^\/api\/v1\/destination-actions$/,
    name: 'listDestinationActions',
    params: ['limit', 'cursor'],
    run: async (_m, url, req) => {
      const limit = checkInt('limit', url.searchParams.get('limit'), DEFAULT_ACTIONS_PAGE, MAX_ACTIONS_PAGE);
      if (!limit.ok) throw badRequest(limit);
      const current = config();
      const scope = scopeOf(req, current);
      const destinationIds = auditedIds(req, {
        kind: 'destination',
        inForce: current.destinations,
        sees: (d) => scope.seesDestination(d.id),
        deletedIn,
      });
      const cursor = url.searchParams.get('cursor') ?? undefined;
      const page = await actions.page({
        limit: limit.value,
        ...(cursor !== undefined && { cursor }),
        ...(destinationIds && { destinationIds }),
      });
      if (page === undefined)
        throw new HttpError(400, 'invalid_parameter', 'cursor is not a cursor this API returned', 'cursor');
      return [200, page];
    },
  };
}

/**
 * The destination-control routes (docs/reference/destination-actions.md): destinations with their
 * runtime state, the four actions on a destination or one endpoint, and the recorded actions.
 */
export function controlRoutes(deps: ControlRouteDeps): Route[] {
  const { control, config } = deps;
  const destination = (raw: string, req: IncomingMessage) => {
    const id = pathId('destinationId', raw);
    const d = config().destinations.find((x) => x.id === id);
    if (!d || !scopeOf(req, config()).seesDestination(id))
      throw new HttpError(404, 'not_found', 'no destination of the config has this id');
    return d;
  };
  const act = async (target: { id: string; ref?: string; action: ControlAction }, req: IncomingMessage) => {
    const { id, ref, action } = target;
    const { reason } = actionBody(await readJson(req));
    const record = await control.act({
      destinationId: id,
      ...(ref !== undefined && { endpointRef: ref }),
      action,
      reason,
      ...actorOf(req),
    });
    return [200, { action: record, ...stateView(control.get(id, ref)) }] as [number, unknown];
  };
  return [
    listDestinations(deps),
    {
      method: 'POST',
      pattern: new RegExp(`^/api/v1/destinations/([^/]+)/${ACTION}$`),
      name: 'destinationAction',
      params: [],
      run: async (m, _url, req) => act({ id: destination(m[1]!, req).id, action: m[2] as ControlAction }, req),
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/api/v1/destinations/([^/]+)/endpoints/([^/]+)/${ACTION}$`),
      name: 'endpointAction',
      params: [],
      run: async (m, _url, req) => {
        const d = destination(m[1]!, req);
        // Any ref the config can give an endpoint (`LIMITS.endpointRefChars`), not only an id's 200.
        const ref = pathId('endpointRef', m[2]!, LIMITS.endpointRefChars);
        if (!d.endpoints.some((e) => e.ref === ref))
          throw new HttpError(404, 'not_found', 'the destination has no endpoint with this ref');
        return act({ id: d.id, ref, action: m[3] as ControlAction }, req);
      },
    },
    listDestinationActions(deps),
  ];
}
