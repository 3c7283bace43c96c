import { DEFAULT_ID_PAGE, MAX_ID_PAGE } from '../../domain/id-pages.ts';
import { errors, id, idParam, ref, time } from './openapi-schemas.ts';
import { auditSchemas, listSchemas, versionedPaths } from './openapi-versioned.ts';
import { SOURCE_RESOURCE } from './versioned-resource.ts';

const writeKey = {
  type: 'object',
  required: ['id', 'createdAt'],
  properties: {
    id: { type: 'string', description: 'The public id (`wk_…`): lists and revocations name the key by it' },
    createdAt: time,
    revokedAt: { ...time, description: 'When it was revoked; absent while in force' },
  },
};
const runtimeSource = {
  type: 'object',
  required: ['id', 'name', 'tenant', 'version', 'updatedAt', 'updatedBy', 'writeKeys'],
  properties: {
    id,
    name: { type: 'string' },
    tenant: { type: 'string', description: 'The tenant it belongs to (docs/reference/tenants.md)' },
    version: { type: 'integer', minimum: 1 },
    updatedAt: time,
    updatedBy: { type: 'string', description: 'The name of the token that made the change (`admin`: the admin token)' },
    writeKeys: {
      type: 'array',
      items: writeKey,
      description: 'Its keys in force and its last revoked ones: ids and times, never a key or its digest',
    },
  },
};

/** The runtime sources' schemas of the OpenAPI document (docs/reference/runtime-sources.md, "API"). */
export const sourceSchemas = {
  RuntimeSource: {
    ...runtimeSource,
    required: ['origin', ...runtimeSource.required],
    properties: { origin: { const: 'runtime' }, ...runtimeSource.properties },
  },
  FileSource: {
    type: 'object',
    required: ['origin', 'id', 'name', 'tenant', 'file'],
    properties: {
      origin: {
        const: 'file',
        description: 'Declared in the config file: read-only through the API, its keys never shown',
      },
      id,
      name: { type: 'string' },
      tenant: { type: 'string', description: 'The tenant it belongs to (docs/reference/tenants.md)' },
      file: { type: 'string', description: 'The config file that declares it' },
    },
  },
  ...listSchemas(SOURCE_RESOURCE),
  SourceRequest: {
    type: 'object',
    additionalProperties: false,
    required: ['id'],
    properties: {
      id: { type: 'string', pattern: '^[A-Za-z0-9._-]+$', minLength: 1, maxLength: 200 },
      name: { type: 'string', default: '' },
      tenant: {
        type: 'string',
        pattern: '^[A-Za-z0-9._-]+$',
        minLength: 1,
        maxLength: 100,
        description: "The admin's choice (default `default`); a tenant token's own tenant, the only one it may name",
      },
    },
  },
  RenameSourceRequest: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: { name: { type: 'string' } },
  },
  SourceWritten: {
    type: 'object',
    required: ['source'],
    properties: {
      source: runtimeSource,
      writeKey: {
        type: 'object',
        required: ['id', 'key', 'createdAt'],
        description: 'The key this change minted (a create, a mint): shown this once, never again',
        properties: {
          id: { type: 'string' },
          key: { type: 'string', description: '`sk_` and 43 base64url characters' },
          createdAt: time,
        },
      },
    },
  },
  ...auditSchemas(SOURCE_RESOURCE, {
    kinds: ['created', 'renamed', 'key_minted', 'key_revoked', 'deleted'],
    fields: '`name`, `writeKeys.<key id>` (minted), `writeKeys.<key id>.revokedAt` (revoked): names only',
  }),
};

/** The runtime sources' paths of the OpenAPI document. */
export const sourcePaths = versionedPaths({
  resource: SOURCE_RESOURCE,
  summaries: {
    list: "Every source by id: the file's (read-only, keys never shown) and the runtime ones (key ids and times)",
    create: 'Creates a runtime source with a first write key, returned once',
    get: 'One source; a runtime one with its ETag',
    delete: 'Deletes a runtime source no destination names; its keys are refused once ingest read it',
  },
  list: { page: { max: MAX_ID_PAGE, default: DEFAULT_ID_PAGE } },
  create: { body: ref('SourceRequest'), created: 'Created, with its write key' },
  refusals: {
    '404': 'No runtime source has this id, or the source no key of this id',
    '409':
      'The config file declares the id (the message names the file), a runtime source has it (`id_taken`; `id_reserved` when another tenant holds it or deleted it last), destinations name the source (delete), the key is revoked already, or runtime sources are off',
  },
  edits: ({ one, ifMatch, refused, written }) => ({
    one: {
      patch: {
        operationId: 'renameSource',
        summary: 'Renames a runtime source (its name is all a change sets besides its keys)',
        parameters: [one, ifMatch],
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: ref('RenameSourceRequest') },
            'application/merge-patch+json': { schema: ref('RenameSourceRequest') },
          },
        },
        responses: { ...written('200', 'Renamed'), ...refused, ...errors },
      },
    },
    below: {
      '/api/v1/source-definitions/{sourceId}/write-keys': {
        post: {
          operationId: 'mintWriteKey',
          summary: 'Mints a write key beside the others (at most 10 in force), returned once',
          parameters: [one, ifMatch],
          responses: { ...written('201', 'Minted'), ...refused, ...errors },
        },
      },
      '/api/v1/source-definitions/{sourceId}/write-keys/{keyId}': {
        delete: {
          operationId: 'revokeWriteKey',
          summary: 'Revokes a write key: refused (401) by each ingest replica once it read the change, within a second',
          parameters: [one, idParam('keyId', 'The key (`wk_…`)'), ifMatch],
          responses: { ...written('200', 'Revoked'), ...refused, ...errors },
        },
      },
    },
  }),
});
