import { PORTAL_LINK_DEFAULT_MS, PORTAL_LINK_MAX_MS } from '../../domain/portal-link.ts';
import { errors, json, ref, time } from './openapi-schemas.ts';

/** The portal links' schemas of the OpenAPI document (docs/reference/portal-links.md). */
export const portalSchemas = {
  PortalLinkRequest: {
    type: 'object',
    additionalProperties: false,
    properties: {
      tenant: {
        type: 'string',
        pattern: '^[A-Za-z0-9._-]+$',
        minLength: 1,
        maxLength: 100,
        description: "The admin's choice (required for it); a tenant token mints for its own tenant only",
      },
      destinationId: {
        type: 'string',
        description: "One of the tenant's destinations: the link then sees that one only (404 for any other)",
      },
      ttlMs: {
        type: 'integer',
        minimum: 1_000,
        maximum: PORTAL_LINK_MAX_MS,
        default: PORTAL_LINK_DEFAULT_MS,
        description: 'How long the link lives, in milliseconds',
      },
    },
  },
  PortalLink: {
    type: 'object',
    required: ['id', 'url', 'token', 'expiresAt'],
    properties: {
      id: {
        type: 'string',
        description: 'The link id: actions taken through it are recorded by `portal:<id> by <minter>`',
      },
      url: { type: 'string', description: 'The console opened on the link: `<console base>/console/#portal=<token>`' },
      token: { type: 'string', description: 'The link itself (`spl1.<keyId>.<grant>.<mac>`), a bearer token' },
      expiresAt: time,
    },
  },
};

/** The portal links' paths of the OpenAPI document. */
export const portalPaths = {
  '/api/v1/portal-links': {
    post: {
      operationId: 'createPortalLink',
      summary: "Mints a signed, expiring link to one tenant's view of the console, optionally one destination of it",
      requestBody: { required: false, ...json(ref('PortalLinkRequest')) },
      responses: {
        '201': { description: 'Minted', ...json(ref('PortalLink')) },
        '404': { description: 'No such tenant, or no destination of the tenant has the id', ...json(ref('Error')) },
        '409': {
          description: 'Runtime destinations are off: links are signed with runtimeDestinations.keyring',
          ...json(ref('Error')),
        },
        ...errors,
      },
    },
  },
};
