import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SluiceConfig } from '@sluice/config';
import type { TokenEntry } from '@sluice/destination-catalog';
import type { Logger } from '@sluice/logging';
import type { RequestHandler } from '@sluice/service-kit';
import { LIMITED_ANSWER_HOLD_MS } from '../../constants.ts';
import { checkParams } from '../../domain/query.ts';
import type { DeliveryLogMetrics } from '../../metrics.ts';
import type { LogReader } from '../db/read-store.ts';
import type { DestinationControl } from '../kafka/destination-control.ts';
import type { ActionLog } from '../db/action-log.ts';
import type { Replayer } from '../kafka/replayer.ts';
import { allows, type Principal } from '../../domain/access-policy.ts';
import { authenticate, type FailureReason } from './auth.ts';
import { AuthFailures } from './auth-failures.ts';
import { clientAddress, type ProxyTrust, proxyTrust } from './client-address.ts';
import { setCaller } from './caller.ts';
import { serveConsole } from './console-assets.ts';
import { controlRoutes } from './control-routes.ts';
import { type DefinitionRouteDeps, definitionRoutes } from './definition-routes.ts';
import { type SourceRouteDeps, sourceRoutes } from './source-routes.ts';
import { badRequest, HttpError, type Route, send } from './http-io.ts';
import { ledgerRoutes } from './ledger-routes.ts';
import { readRoutes } from './read-routes.ts';
import { openApiDocument } from './openapi.ts';
import { pathMatcher } from './route-paths.ts';
import { replayRoutes } from './replay-routes.ts';
import { destinationTestRoute } from './test-route.ts';
import { type TokenRouteDeps, tokenRoutes } from './token-routes.ts';
import { type PortalRouteDeps, portalRoutes } from './portal-routes.ts';

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
  /** The recorded actions on destinations, in the log's database. */
  actions: Pick<ActionLog, 'page'>;
  /** The config file's destinations and the runtime destinations' catalog (undefined: runtime destinations off). */
  definitions: Pick<DefinitionRouteDeps, 'file' | 'catalog' | 'changes'>;
  /** The config file's sources and the catalog's, with the sources' audit (docs/reference/runtime-sources.md). */
  sources: Pick<SourceRouteDeps, 'file' | 'catalog' | 'changes'>;
  /** The tenant tokens, in the same catalog (docs/reference/tokens.md); undefined catalog: no tenant token. */
  tokens: Pick<TokenRouteDeps, 'catalog'>;
  /** The runtime keyring portal links are signed and verified with (docs/reference/portal-links.md); undefined: none. */
  portalLinks: Pick<PortalRouteDeps, 'keyring'>;
}

/** Header of the request id: taken from the request when it is a sane one, else made; sent back on every API answer. */
const REQUEST_ID_HEADER = 'x-request-id';
const SANE_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** The tenant tokens when the catalog is off: none. */
const NO_TOKENS: ReadonlyMap<string, TokenEntry> = new Map();

/** The message of a 401, by why the token was refused. */
const REFUSED: Record<FailureReason, string> = {
  missing: 'a valid bearer token is required',
  invalid: 'a valid bearer token is required',
  expired: 'the bearer token expired',
  portal_expired: 'the portal link expired',
  portal_bad_signature: 'the portal link is not valid (changed, or signed by a key no longer in force)',
  portal_malformed: 'the portal link is not valid',
  portal_minter_revoked: 'the portal link was minted by a token no longer in force',
};

/** The OpenAPI path a request's path is an instance of: how the authorization policy names its route. */
const documentedPath = pathMatcher(Object.keys(openApiDocument.paths));

/**
 * The delivery-log HTTP API (docs/delivery-log.md, `/openapi.json`) and the console. Every `/api/`
 * route needs a bearer token, and the scope the authorization policy gives the route
 * (`domain/access-policy.ts`, docs/reference/tokens.md); without a configured admin token they
 * answer 404. Every input is checked (bounded ids, closed sets, bounded pages) and refused with a 4xx
 * naming the field.
 */
export function createApiHandler(deps: ApiDeps): RequestHandler {
  const routes = apiRoutes(deps);
  const failures = new AuthFailures(deps.now);
  const trustOf = proxyTrust();
  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://delivery-log');
    if (req.method === 'GET' && url.pathname === '/openapi.json') return send(res, 200, openApiDocument);
    if (!url.pathname.startsWith('/api/')) {
      if (await serveConsole(url.pathname, req, res)) return;
      return send(res, 404, { code: 'not_found', message: 'no such route' });
    }
    const trust = trustOf(deps.config().deliveryLog.trustedProxies);
    await serveApi({ ...deps, routes, failures, trust }, { req, res, url, requestId: requestIdOf(req) });
  };
}

/** Every route of the API, each group from its own module. */
export function apiRoutes(deps: ApiDeps): Route[] {
  const { store, control, config, now } = deps;
  return [
    ...controlRoutes({ store, control, actions: deps.actions, config, deletedIn: deps.definitions.catalog?.deletedIn }),
    ...definitionRoutes({ ...deps.definitions, config, now, logger: deps.logger }),
    destinationTestRoute({ config, now, logger: deps.logger }),
    ...sourceRoutes({ ...deps.sources, config, now, logger: deps.logger }),
    ...ledgerRoutes({ store, now, config, control }),
    ...readRoutes({ store, config, now }),
    ...replayRoutes({ store, config, replayer: deps.replayer, metrics: deps.metrics }),
    ...tokenRoutes({ ...deps.tokens, now }),
    ...portalRoutes({ ...deps.portalLinks, config, now }),
  ];
}

/** One `/api/` request: its id, the URL it asks for, and the answer to write. */
interface ApiRequest {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  requestId: string;
}

/** The request id a request gives when it is a sane one, else a new one. */
function requestIdOf(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Answers one `/api/` request through its route, an error as its status, and counts it by route and status. */
async function serveApi(deps: ApiDeps & ApiGuards & { routes: Route[] }, call: ApiRequest): Promise<void> {
  const { req, res, url } = call;
  res.setHeader(REQUEST_ID_HEADER, call.requestId);
  let name = 'unknown';
  let status = 500;
  try {
    const principal = await caller(deps, req);
    const route = authorizedRoute({ principal, routes: deps.routes, req, url });
    name = route.name;
    setCaller(req, principal);
    const unknown = checkParams(url.searchParams, route.params);
    if (unknown) throw badRequest(unknown);
    const [code, body, headers] = await route.run(route.pattern.exec(url.pathname)!, url, req);
    status = code;
    for (const [header, value] of Object.entries(headers ?? {})) res.setHeader(header, value);
    send(res, code, body);
  } catch (err) {
    status = err instanceof HttpError ? err.status : 500;
    sendFailure(deps.logger, err, name, call);
  } finally {
    deps.metrics.requests.inc({ route: name, status: String(status) });
  }
}

/** What holds back a client that fails to authenticate: its bucket of failures, and who the client is behind a proxy. */
interface ApiGuards {
  failures: AuthFailures;
  trust: ProxyTrust;
}

/**
 * Who the request's bearer token is: 404 with no admin token configured (the API is off), 401 for
 * no valid token, 429 for a client past its failed authentications (`AuthFailures`; the client is
 * the connection's address, or behind a trusted proxy the address it forwards), each failure
 * counted by its reason.
 */
async function caller(deps: ApiDeps & ApiGuards, req: IncomingMessage): Promise<Principal> {
  const adminToken = deps.config().deliveryLog.adminToken;
  if (adminToken === undefined) throw new HttpError(404, 'not_found', 'the API is off: set deliveryLog.adminToken');
  const tokens = () => deps.tokens.catalog?.current().tokens ?? NO_TOKENS;
  const { keyring } = deps.portalLinks;
  const portal = keyring === undefined ? undefined : { keyring, now: deps.now };
  const outcome = authenticate({ adminToken, tokens, now: deps.now, portal }, req);
  if (outcome.ok) return outcome.principal;
  const client = clientAddress(req, deps.trust);
  const waitMs = deps.failures.waitMs(client);
  deps.metrics.authFailures.inc({ reason: waitMs > 0 ? 'limited' : outcome.reason });
  if (waitMs > 0) {
    const limited = new HttpError(429, 'too_many_failures', 'too many failed authentications from this address');
    limited.headers['retry-after'] = String(Math.ceil(waitMs / 1_000));
    // Held first, so a client that keeps guessing is slowed to about one answer a second per connection;
    // past the places for held answers, sent at once, closing its connection.
    if (!deps.failures.hold(client)) {
      limited.headers.connection = 'close';
      throw limited;
    }
    try {
      await sleep(Math.min(waitMs, LIMITED_ANSWER_HOLD_MS));
    } finally {
      deps.failures.release(client);
    }
    throw limited;
  }
  deps.failures.failed(client);
  throw new HttpError(401, 'unauthorized', REFUSED[outcome.reason]);
}

/**
 * The route a request asks for, once the policy allows its caller: 404 for no such route, 405 for
 * another method, 403 when the caller's role lacks the route's scope or the policy does not list it.
 */
function authorizedRoute(call: { principal: Principal; routes: Route[]; req: IncomingMessage; url: URL }): Route {
  const { principal, routes, req, url } = call;
  const matching = routes.filter((r) => r.pattern.test(url.pathname));
  if (matching.length === 0) throw new HttpError(404, 'not_found', 'no such route');
  const route = matching.find((r) => r.method === req.method);
  if (!route) throw new HttpError(405, 'method_not_allowed', `use ${matching.map((r) => r.method).join(', ')}`);
  const path = documentedPath(url.pathname);
  if (path === undefined || !allows(principal.role, { method: route.method, path }))
    throw new HttpError(403, 'forbidden', `this token may not call ${route.method} ${path ?? url.pathname}`);
  return route;
}

/** An `HttpError` answered as it says; anything else logged with the request id and answered 500. */
function sendFailure(logger: Logger, err: unknown, route: string, call: ApiRequest): void {
  const { req, res, url, requestId } = call;
  if (!(err instanceof HttpError)) {
    logger.error({ err, requestId, route, method: req.method, path: url.pathname }, 'delivery-log API request failed');
    if (res.headersSent) res.end();
    else
      send(res, 500, {
        code: 'internal',
        message: `internal error; the log has it under request id ${requestId}`,
        requestId,
      });
    return;
  }
  if (err.status === 401) res.setHeader('www-authenticate', 'Bearer');
  for (const [header, value] of Object.entries(err.headers)) res.setHeader(header, value);
  send(res, err.status, {
    code: err.code,
    message: err.message,
    ...(err.field !== undefined && { field: err.field }),
  });
}
