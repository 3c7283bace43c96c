import { TOKEN_ROLES } from '@sluice/log-api';
import { errors, idParam, json, ref, time } from './openapi-schemas.ts';

const name = { type: 'string', pattern: '^[A-Za-z0-9._-]+$', minLength: 1, maxLength: 100 };
const token = {
  type: 'object',
  required: ['id', 'name', 'tenant', 'role', 'createdAt', 'createdBy'],
  properties: {
    id: { type: 'string', description: 'The public id (`tok_…`): revocations name the token by it' },
    name: {
      ...name,
      description: 'Unique among the tokens in force: the actions and changes it makes are recorded by it',
    },
    tenant: name,
    role: { type: 'string', enum: [...TOKEN_ROLES] },
    createdAt: time,
    createdBy: { type: 'string' },
    expiresAt: { ...time, description: 'From then on the token is refused (401); absent: it does not expire' },
  },
};
const refused = {
  '409': { description: 'Runtime destinations are off: tokens live in their catalog', ...json(ref('Error')) },
};

/** The tenant tokens' schemas of the OpenAPI document (docs/reference/tokens.md). */
export const tokenSchemas = {
  Token: token,
  Tokens: { type: 'object', required: ['tokens'], properties: { tokens: { type: 'array', items: ref('Token') } } },
  TokenRequest: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'tenant', 'role'],
    properties: {
      name,
      tenant: name,
      role: { type: 'string', enum: [...TOKEN_ROLES] },
      expiresAt: { ...time, description: 'In the future; absent: it does not expire' },
    },
  },
  TokenCreated: {
    type: 'object',
    required: ['token', 'secret'],
    properties: {
      token: ref('Token'),
      secret: {
        type: 'string',
        description: 'The token itself (`slt_…`): shown in this answer only, kept as its SHA-256',
      },
    },
  },
  TokenRevoked: {
    type: 'object',
    required: ['id', 'revoked'],
    properties: { id: { type: 'string' }, revoked: { const: true } },
  },
};

/** The tenant tokens' paths of the OpenAPI document. */
export const tokenPaths = {
  '/api/v1/tokens': {
    get: {
      operationId: 'listTokens',
      summary: 'The tenant tokens in force, by name: never a token or its digest',
      responses: { '200': { description: 'Tokens', ...json(ref('Tokens')) }, ...errors },
    },
    post: {
      operationId: 'createToken',
      summary: 'Creates a tenant token, returned once; every replica takes it within a second',
      requestBody: { required: true, ...json(ref('TokenRequest')) },
      responses: { '201': { description: 'Created', ...json(ref('TokenCreated')) }, ...refused, ...errors },
    },
  },
  '/api/v1/tokens/{tokenId}': {
    delete: {
      operationId: 'revokeToken',
      summary: 'Revokes a tenant token: every replica refuses it within a second',
      parameters: [idParam('tokenId', 'The token id (`tok_…`)')],
      responses: {
        '200': { description: 'Revoked', ...json(ref('TokenRevoked')) },
        '404': { description: 'No token in force has this id', ...json(ref('Error')) },
        ...refused,
        ...errors,
      },
    },
  },
};
