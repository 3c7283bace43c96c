/**
 * The operator's routes a portal link may not call although its scopes would allow them, restated
 * from docs/reference/portal-links.md ("What a portal link may do"): what the policy's tests and the
 * authorization matrix hold the policy to.
 */
export const OPERATOR_ONLY_ROUTES: ReadonlySet<string> = new Set([
  'POST /api/v1/destination-definitions',
  'DELETE /api/v1/destination-definitions/{destinationId}',
  'POST /api/v1/source-definitions',
  'PATCH /api/v1/source-definitions/{sourceId}',
  'DELETE /api/v1/source-definitions/{sourceId}',
  'POST /api/v1/source-definitions/{sourceId}/write-keys',
  'DELETE /api/v1/source-definitions/{sourceId}/write-keys/{keyId}',
  'POST /api/v1/portal-links',
]);
