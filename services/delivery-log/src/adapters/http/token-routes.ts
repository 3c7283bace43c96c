import {
  type Catalog,
  type CatalogWriter,
  OUTCOME_STATUS,
  type TokenEntry,
  type TokenOutcome,
} from '@sluice/destination-catalog';
import { callerOf } from './caller.ts';
import { catalogOff, refusalError } from './catalog-http.ts';
import { pathId, readJson, type Route, type RouteAnswer } from './http-io.ts';

/** The catalog as the token routes change it: what the service's reader has read, and the writer. */
export interface TokenCatalog {
  current: () => Catalog;
  writer: Pick<CatalogWriter, 'createToken' | 'revokeToken'>;
}

export interface TokenRouteDeps {
  /** Undefined when `runtimeDestinations` is not configured: tokens are kept in its catalog, so the routes answer 409. */
  catalog: TokenCatalog | undefined;
  now: () => number;
}

const BASE = '/api/v1/tokens';

/** A token as the API shows it: never the token, nor its digest. */
export function tokenView(entry: TokenEntry) {
  const { id, name, tenant, role, createdAt, expiresAt } = entry.definition;
  return {
    id,
    name,
    tenant,
    role,
    createdAt,
    createdBy: entry.updatedBy,
    ...(expiresAt !== undefined && { expiresAt }),
  };
}

/** A change made, as the API answers it: the token created with the token itself (shown this once), or the revocation. */
function answer(outcome: TokenOutcome): RouteAnswer {
  if (!('record' in outcome)) throw refusalError(outcome, 'token');
  if (outcome.kind === 'deleted') return [200, { id: outcome.id, revoked: true }];
  return [OUTCOME_STATUS.created, { token: tokenView(outcome.entry), secret: outcome.token }];
}

/**
 * The tenant tokens' routes (docs/reference/tokens.md): create (the token returned once), list,
 * revoke. Kept in the catalog topic, so every replica applies a change within a second.
 */
export function tokenRoutes(deps: TokenRouteDeps): Route[] {
  const catalog = (): TokenCatalog => {
    if (deps.catalog === undefined) throw catalogOff('token');
    return deps.catalog;
  };
  return [
    {
      method: 'GET',
      pattern: new RegExp(`^${BASE}$`),
      name: 'listTokens',
      params: [],
      run: async () => {
        const tokens = [...(deps.catalog?.current().tokens.values() ?? [])].map(tokenView);
        return [200, { tokens: tokens.sort((a, b) => a.name.localeCompare(b.name)) }];
      },
    },
    {
      method: 'POST',
      pattern: new RegExp(`^${BASE}$`),
      name: 'createToken',
      params: [],
      run: async (_m, _url, req) => {
        const { writer } = catalog();
        const token = await readJson(req);
        return answer(await writer.createToken({ by: callerOf(req).name, at: deps.now(), token }));
      },
    },
    {
      method: 'DELETE',
      pattern: new RegExp(`^${BASE}/([^/]+)$`),
      name: 'revokeToken',
      params: [],
      run: async (m, _url, req) => {
        const { writer } = catalog();
        const id = pathId('tokenId', m[1]!);
        return answer(await writer.revokeToken({ by: callerOf(req).name, at: deps.now(), id }));
      },
    },
  ];
}
