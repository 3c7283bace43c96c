import { scopeOf } from '../../domain/access-policy.ts';
import { json, ref } from './openapi-schemas.ts';

/** The security scheme every route names, with the scope it needs as the requirement's role. */
export const SECURITY_SCHEME = 'bearerToken';

type Operations = Record<string, { responses: object }>;

/**
 * The document with each operation marked by the authorization policy (`access-policy.ts`): its
 * scope as `x-sluice-scope`, a security requirement naming it, and the 403 a token without it gets.
 * An operation the policy does not list is marked `none`: nobody may call it.
 */
export function withScopes<D extends { paths: Record<string, Operations> }>(document: D): D {
  const paths = Object.fromEntries(
    Object.entries(document.paths).map(([path, operations]) => [
      path,
      Object.fromEntries(
        Object.entries(operations).map(([method, operation]) => {
          const scope = scopeOf(method.toUpperCase(), path) ?? 'none';
          const forbidden = { description: `The token lacks the scope ${scope}`, ...json(ref('Error')) };
          return [
            method,
            {
              ...operation,
              'x-sluice-scope': scope,
              security: [{ [SECURITY_SCHEME]: [scope] }],
              responses: { ...operation.responses, '403': forbidden },
            },
          ];
        }),
      ),
    ]),
  );
  return { ...document, paths };
}
