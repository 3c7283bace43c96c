import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ApiDeps, apiRoutes } from '../src/adapters/http/api.ts';
import { openApiDocument } from '../src/adapters/http/openapi.ts';
import { pathMatcher } from '../src/adapters/http/route-paths.ts';
import { OPERATOR_ONLY_ROUTES } from './operator-routes.ts';
import { allows, ROLES, ROUTE_SCOPES, scopeOf, seesOwnDestination } from '../src/domain/access-policy.ts';

/** Every operation of the OpenAPI document: its method, its path, and a request path that is an instance of it. */
const operations = Object.entries(openApiDocument.paths).flatMap(([path, ops]) =>
  Object.entries(ops as unknown as Record<string, { 'x-sluice-scope': string; security: object[] }>).map(
    ([method, op]) => ({
      method: method.toUpperCase(),
      path,
      sample: path.replace(/\{[^}]+\}/g, (p) => `sample-${p.slice(1, -1)}`),
      op,
    }),
  ),
);

describe('authorization policy', () => {
  it('lists every documented route, and documents every route it lists', () => {
    const documented = new Set(operations.map((o) => `${o.method} ${o.path}`));
    assert.deepEqual([...documented].sort(), Object.keys(ROUTE_SCOPES).sort());
  });

  it("marks each operation of the document with the policy's scope and a security requirement naming it", () => {
    for (const { method, path, op } of operations) {
      const scope = scopeOf(method, path);
      assert.equal(op['x-sluice-scope'], scope, `${method} ${path}`);
      assert.deepEqual(op.security, [{ bearerToken: [scope] }], `${method} ${path}`);
    }
  });

  it('gives every route of the handler exactly one documented operation, so the policy is asked for each', () => {
    const routes = apiRoutes({ definitions: {}, sources: {} } as unknown as ApiDeps);
    const documentedPath = pathMatcher(Object.keys(openApiDocument.paths));
    const reached = new Set<string>();
    for (const { method, path, sample } of operations) {
      const serving = routes.filter((r) => r.method === method && r.pattern.test(sample));
      assert.equal(serving.length, 1, `${method} ${path} is served by one route`);
      assert.equal(documentedPath(sample), path, `${sample} is found as ${path}`);
      reached.add(serving[0]!.name);
    }
    assert.deepEqual([...reached].sort(), [...new Set(routes.map((r) => r.name))].sort());
  });

  it('denies what it does not list, to every role', () => {
    for (const role of ROLES) {
      assert.equal(allows(role, { method: 'GET', path: '/api/v1/unlisted' }), false);
      assert.equal(allows(role, { method: 'DELETE', path: '/api/v1/messages' }), false);
    }
  });

  it('lets the admin call every route, a manage token the tenant ones, a read token only the reading ones', () => {
    for (const [key, scope] of Object.entries(ROUTE_SCOPES)) {
      const [method, path] = key.split(' ') as [string, string];
      assert.equal(allows('admin', { method, path }), true, key);
      assert.equal(allows('manage', { method, path }), scope !== 'admin', key);
      assert.equal(allows('read', { method, path }), scope === 'tenant:read', key);
    }
  });

  it("lets a portal link call its tenant's routes but none of the operator's: tokens, links, creating or deleting destinations, sources, write keys", () => {
    for (const [key, scope] of Object.entries(ROUTE_SCOPES)) {
      const [method, path] = key.split(' ') as [string, string];
      assert.equal(allows('portal', { method, path }), scope !== 'admin' && !OPERATOR_ONLY_ROUTES.has(key), key);
    }
    for (const key of ['POST /api/v1/replays', 'POST /api/v1/destination-definitions/{destinationId}/rotate-secret'])
      assert.equal(allows('portal', { method: key.split(' ')[0]!, path: key.split(' ')[1]! }), true, key);
  });

  it('limits a portal link whose grant names a destination to that destination', () => {
    const limited = {
      role: 'portal',
      name: 'portal:x by admin',
      tokenId: 'x',
      tenant: 'a',
      destinationId: 'a-1',
    } as const;
    assert.equal(seesOwnDestination(limited, 'a-1'), true);
    assert.equal(seesOwnDestination(limited, 'a-2'), false);
    assert.equal(
      seesOwnDestination({ role: 'portal', name: 'portal:y by admin', tokenId: 'y', tenant: 'a' }, 'a-2'),
      true,
    );
    assert.equal(seesOwnDestination({ role: 'manage', name: 'm', tokenId: 'tok_m', tenant: 'a' }, 'a-2'), true);
  });
});
