import { DEFAULT_CHANGES_PAGE, MAX_CHANGES_PAGE } from '../../domain/audit.ts';
import { DEFAULT_ID_PAGE, MAX_ID_PAGE } from '../../domain/id-pages.ts';
import { errors, id, idParam, json, queryId, queryLimit, ref, time } from './openapi-schemas.ts';

const etag = { ETag: { description: 'The version, quoted: send it back as `If-Match`', schema: { type: 'string' } } };
const ifMatch = {
  name: 'If-Match',
  in: 'header',
  required: true,
  description: 'The ETag of the version the change is made on (428 without it, 412 when it is no longer current)',
  schema: { type: 'string' },
};
const one = idParam('sourceId', 'The source');
const refused = {
  '404': { description: 'No runtime source has this id, or the source no key of this id', ...json(ref('Error')) },
  '409': {
    description:
      'The config file declares the id (the message names the file), destinations name the source (delete), the key is revoked already, or runtime sources are off',
    ...json(ref('Error')),
  },
  '412': { description: 'The source is no longer at the If-Match version', ...json(ref('Error')) },
  '428': { description: 'If-Match is missing', ...json(ref('Error')) },
};
const shown = (status: string, description: string) => ({
  [status]: { description, headers: etag, ...json(ref('SourceWritten')) },
});
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
  Source: { oneOf: [ref('RuntimeSource'), ref('FileSource')] },
  Sources: {
    type: 'object',
    required: ['sources', 'nextCursor'],
    properties: {
      sources: { type: 'array', items: ref('Source') },
      nextCursor: { oneOf: [{ type: 'string' }, { type: 'null' }] },
    },
  },
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
  SourceDeleted: {
    type: 'object',
    required: ['id', 'version'],
    properties: { id, version: { type: 'integer', description: "The deletion's version" } },
  },
  SourceChanges: {
    type: 'object',
    required: ['changes'],
    properties: {
      changes: {
        type: 'array',
        items: {
          type: 'object',
          required: ['sourceId', 'version', 'change', 'by', 'at', 'fields'],
          properties: {
            sourceId: id,
            version: { type: 'integer', description: 'The version the change made (a deletion: its own)' },
            change: { type: 'string', enum: ['created', 'renamed', 'key_minted', 'key_revoked', 'deleted'] },
            by: { type: 'string' },
            at: time,
            fields: {
              type: 'array',
              items: { type: 'string' },
              description:
                '`name`, `writeKeys.<key id>` (minted), `writeKeys.<key id>.revokedAt` (revoked): names only',
            },
          },
        },
      },
    },
  },
};

/** The runtime sources' paths of the OpenAPI document. */
export const sourcePaths = {
  '/api/v1/source-definitions': {
    get: {
      operationId: 'listSources',
      summary: "Every source by id: the file's (read-only, keys never shown) and the runtime ones (key ids and times)",
      parameters: [
        queryLimit({ max: MAX_ID_PAGE, default: DEFAULT_ID_PAGE }),
        {
          name: 'cursor',
          in: 'query',
          required: false,
          description: '`nextCursor` of the previous page',
          schema: { type: 'string' },
        },
      ],
      responses: { '200': { description: 'One page', ...json(ref('Sources')) }, ...errors },
    },
    post: {
      operationId: 'createSource',
      summary: 'Creates a runtime source with a first write key, returned once',
      requestBody: { required: true, ...json(ref('SourceRequest')) },
      responses: { ...shown('201', 'Created, with its write key'), ...refused, ...errors },
    },
  },
  '/api/v1/source-changes': {
    get: {
      operationId: 'listSourceChanges',
      summary: 'The audit of runtime sources: each change made through this API, newest first',
      parameters: [
        queryId('sourceId', 'Only this source'),
        queryLimit({ max: MAX_CHANGES_PAGE, default: DEFAULT_CHANGES_PAGE }),
      ],
      responses: { '200': { description: 'Changes', ...json(ref('SourceChanges')) }, ...errors },
    },
  },
  '/api/v1/source-definitions/{sourceId}': {
    get: {
      operationId: 'getSource',
      summary: 'One source; a runtime one with its ETag',
      parameters: [one],
      responses: {
        '200': { description: 'The source', headers: etag, ...json(ref('Source')) },
        '404': { description: 'No source has this id', ...json(ref('Error')) },
        ...errors,
      },
    },
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
      responses: { ...shown('200', 'Renamed'), ...refused, ...errors },
    },
    delete: {
      operationId: 'deleteSource',
      summary: 'Deletes a runtime source no destination names; its keys are refused once ingest read it',
      parameters: [one, ifMatch],
      responses: { '200': { description: 'Deleted', ...json(ref('SourceDeleted')) }, ...refused, ...errors },
    },
  },
  '/api/v1/source-definitions/{sourceId}/write-keys': {
    post: {
      operationId: 'mintWriteKey',
      summary: 'Mints a write key beside the others (at most 10 in force), returned once',
      parameters: [one, ifMatch],
      responses: { ...shown('201', 'Minted'), ...refused, ...errors },
    },
  },
  '/api/v1/source-definitions/{sourceId}/write-keys/{keyId}': {
    delete: {
      operationId: 'revokeWriteKey',
      summary: 'Revokes a write key: refused (401) by each ingest replica once it read the change, within a second',
      parameters: [one, idParam('keyId', 'The key (`wk_…`)'), ifMatch],
      responses: { ...shown('200', 'Revoked'), ...refused, ...errors },
    },
  },
};
