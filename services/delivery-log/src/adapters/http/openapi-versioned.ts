import { DEFAULT_CHANGES_PAGE, MAX_CHANGES_PAGE } from '../../domain/audit.ts';
import { byTokenId, errors, id, idParam, json, pageOf, pageParams, queryId, ref, time } from './openapi-schemas.ts';
import type { VersionedResource } from './versioned-resource.ts';

const etag = { ETag: { description: 'The version, quoted: send it back as `If-Match`', schema: { type: 'string' } } };
const ifMatch = {
  name: 'If-Match',
  in: 'header',
  required: true,
  description: 'The ETag of the version the change is made on (428 without it, 412 when it is no longer current)',
  schema: { type: 'string' },
};
const error = (description: string) => ({ description, ...json(ref('Error')) });

/** What the operations a resource adds besides list, create, get and delete are built with. */
export interface VersionedParts {
  /** The path parameter naming one. */
  one: object;
  ifMatch: object;
  /** The refusals of a change, 412 and 428 included. */
  refused: Record<string, object>;
  /** A change's answer under `status`: the `<name>Written` schema with its ETag. */
  written: (status: string, description: string) => Record<string, object>;
}

/** One versioned resource's part of the OpenAPI document. */
export interface VersionedPathsContext {
  resource: VersionedResource;
  summaries: { list: string; create: string; get: string; delete: string };
  /** The list's page size; its filters (before `limit` and `cursor`), if any. */
  list: { page: { max: number; default: number }; filters?: object[] };
  /** The body of a create, and what its 201 says. */
  create: { body: object; created: string };
  /** What a refused change answers besides 412 and 428, by status (404 and 409 at least). */
  refusals: Record<string, string>;
  /** The operations on one besides get and delete (`one`), and the paths below one (`below`). */
  edits: (parts: VersionedParts) => { one: object; below: object };
}

/**
 * The paths of a resource changed at an expected version: its list and create, its audit, one of
 * them read and deleted, and the edits the resource adds, each change answering the same refusals.
 */
export function versionedPaths(context: VersionedPathsContext): Record<string, object> {
  const { resource, summaries, refusals } = context;
  const { kind, name } = resource;
  const one = idParam(resource.idName, `The ${kind}`);
  const refused: Record<string, object> = {
    ...Object.fromEntries(Object.entries(refusals).map(([status, text]) => [status, error(text)])),
    '412': error(`The ${kind} is no longer at the If-Match version`),
    '428': error('If-Match is missing'),
  };
  const written = (status: string, description: string) => ({
    [status]: { description, headers: etag, ...json(ref(`${name}Written`)) },
  });
  const edits = context.edits({ one, ifMatch, refused, written });
  return {
    [resource.base]: {
      get: {
        operationId: `list${name}s`,
        summary: summaries.list,
        parameters: [...(context.list.filters ?? []), ...pageParams(context.list.page)],
        responses: { '200': { description: 'One page', ...json(ref(`${name}s`)) }, ...errors },
      },
      post: {
        operationId: `create${name}`,
        summary: summaries.create,
        requestBody: { required: true, ...json(context.create.body) },
        responses: { ...written('201', context.create.created), ...refused, ...errors },
      },
    },
    [resource.changes]: {
      get: {
        operationId: `list${name}Changes`,
        summary: `The audit of runtime ${kind}s: each change made through this API, newest first (kept as long as the log's retention)`,
        parameters: [
          queryId(resource.idName, `Only this ${kind}`),
          ...pageParams({ max: MAX_CHANGES_PAGE, default: DEFAULT_CHANGES_PAGE }),
        ],
        responses: { '200': { description: 'Changes', ...json(ref(`${name}Changes`)) }, ...errors },
      },
    },
    [`${resource.base}/{${resource.idName}}`]: {
      get: {
        operationId: `get${name}`,
        summary: summaries.get,
        parameters: [one],
        responses: {
          '200': { description: `The ${kind}`, headers: etag, ...json(ref(name)) },
          '404': error(`No ${kind} has this id`),
          ...errors,
        },
      },
      ...edits.one,
      delete: {
        operationId: `delete${name}`,
        summary: summaries.delete,
        parameters: [one, ifMatch],
        responses: { '200': { description: 'Deleted', ...json(ref(`${name}Deleted`)) }, ...refused, ...errors },
      },
    },
    ...edits.below,
  };
}

/** A resource's list schemas: one of them (runtime or the file's) and a page of them. */
export const listSchemas = (resource: VersionedResource) => ({
  [resource.name]: { oneOf: [ref(`Runtime${resource.name}`), ref(`File${resource.name}`)] },
  [`${resource.name}s`]: pageOf(`${resource.name.toLowerCase()}s`, ref(resource.name)),
});

/** A resource's audit schemas: a deletion's answer, and the audit's page with its kinds of change. */
export const auditSchemas = (resource: VersionedResource, changes: { kinds: string[]; fields: string }) => ({
  [`${resource.name}Deleted`]: {
    type: 'object',
    required: ['id', 'version'],
    properties: { id, version: { type: 'integer', description: "The deletion's version" } },
  },
  [`${resource.name}Changes`]: pageOf('changes', {
    type: 'object',
    required: [resource.idName, 'version', 'change', 'by', 'at', 'fields'],
    properties: {
      [resource.idName]: id,
      version: { type: 'integer', description: 'The version the change made (a deletion: its own)' },
      change: { type: 'string', enum: changes.kinds },
      by: { type: 'string', description: 'The name of the token that made it' },
      byTokenId,
      at: time,
      fields: { type: 'array', items: { type: 'string' }, description: changes.fields },
    },
  }),
});
