import { DEFAULT_PAGE_SIZE, DEFAULT_STREAM_SIZE, MAX_PAGE_SIZE, MAX_STREAM_SIZE } from '../../constants.ts';
import { controlPaths, controlSchemas } from './openapi-control.ts';
import { definitionPaths, definitionSchemas } from './openapi-definitions.ts';
import { ledgerPaths, ledgerSchemas } from './openapi-ledger.ts';
import { sourcePaths, sourceSchemas } from './openapi-sources.ts';
import { portalPaths, portalSchemas } from './openapi-portal.ts';
import { tokenPaths, tokenSchemas } from './openapi-tokens.ts';
import { errors, id, idParam, json, queryId, queryTime, ref, schemas, queryLimit } from './openapi-schemas.ts';
import { SECURITY_SCHEME, withScopes } from './openapi-scopes.ts';

/**
 * The OpenAPI 3.1 description of the delivery-log API (served at `/openapi.json`, documented in
 * docs/delivery-log.md). Its schemas are JSON Schema 2020-12; the tests check real answers against them.
 */
export const openApiDocument = withScopes({
  openapi: '3.1.0',
  info: {
    title: 'Sluice delivery log',
    version: '1.0.0',
    description:
      'Every event, every delivery attempt and the state of each message per destination, with replay. ' +
      'Every answer under /api/ carries an `x-request-id` header (the one the request sent, 1–128 printable ASCII ' +
      'characters, or a new one); a 5xx is logged under it. A query parameter a route does not take is a 400.',
  },
  components: {
    securitySchemes: {
      [SECURITY_SCHEME]: {
        type: 'http',
        scheme: 'bearer',
        description:
          '`deliveryLog.adminToken` of the config, or a tenant token (docs/reference/tokens.md); each operation names ' +
          'the scope it needs in its security requirement and in `x-sluice-scope`',
      },
    },
    schemas: {
      ...schemas,
      ...controlSchemas,
      ...definitionSchemas,
      ...sourceSchemas,
      ...ledgerSchemas,
      ...tokenSchemas,
      ...portalSchemas,
    },
  },
  security: [{ [SECURITY_SCHEME]: [] }],
  paths: {
    '/api/v1/messages': {
      get: {
        operationId: 'listMessages',
        summary: 'Messages, newest first, with their state per destination',
        parameters: [
          queryId('sourceId', 'Only this source'),
          queryId('destinationId', 'Only messages with a delivery to this destination'),
          queryId('messageId', 'Only this message id'),
          {
            name: 'state',
            in: 'query',
            required: false,
            description: 'Only messages with a delivery in this state',
            schema: ref('State'),
          },
          queryTime('since', 'Received at or after'),
          queryTime('until', 'Received before'),
          queryLimit({ max: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE }),
          {
            name: 'cursor',
            in: 'query',
            required: false,
            description: '`nextCursor` of the previous page',
            schema: { type: 'string', maxLength: 1024 },
          },
        ],
        responses: { '200': { description: 'One page', ...json(ref('MessagePage')) }, ...errors },
      },
    },
    '/api/v1/messages/{sourceId}/{messageId}': {
      get: {
        operationId: 'getMessage',
        summary: 'One message: the event, its state per destination, its newest attempts and replays (with totals)',
        parameters: [idParam('sourceId', 'Source of the event'), idParam('messageId', 'The event messageId')],
        responses: {
          '200': { description: 'The message', ...json(ref('Message')) },
          '404': { description: 'Not in the log (never seen, or pruned)', ...json(ref('Error')) },
          ...errors,
        },
      },
    },
    '/api/v1/batches/{batchId}': {
      get: {
        operationId: 'getBatch',
        summary: 'The events of one batch (batched delivery): their attempt in it and their state now',
        parameters: [idParam('batchId', 'The batch id (`X-Batch-Id`, the `batchId` of an attempt)')],
        responses: {
          '200': { description: 'The batch', ...json(ref('Batch')) },
          '404': { description: 'No attempt in the log names this batch', ...json(ref('Error')) },
          ...errors,
        },
      },
    },
    '/api/v1/messages/{sourceId}/{messageId}/replay': {
      post: {
        operationId: 'replayMessage',
        summary:
          'Replays one message at its dead and delivered destinations (or one): its dead letters, or the kept event',
        parameters: [idParam('sourceId', 'Source of the event'), idParam('messageId', 'The event messageId')],
        requestBody: {
          required: false,
          ...json({ type: 'object', additionalProperties: false, properties: { destinationId: id } }),
        },
        responses: {
          '202': { description: 'Re-injected; new attempts follow', ...json(ref('ReplayResult')) },
          '404': { description: 'Not in the log', ...json(ref('Error')) },
          '409': {
            description: 'No delivery of this message is dead or delivered, or its event is not kept',
            ...json(ref('Error')),
          },
          ...errors,
        },
      },
    },
    '/api/v1/replays': {
      post: {
        operationId: 'replayFilter',
        summary: 'Replays the dead letters matching a filter (as `sluice dead-letters replay`)',
        requestBody: { required: true, ...json(ref('ReplayFilter')) },
        responses: {
          '202': { description: 'Re-injected', ...json(ref('ReplayResult')) },
          '413': { description: 'The filter matches too many dead letters', ...json(ref('Error')) },
          ...errors,
        },
      },
    },
    '/api/v1/destinations': {
      get: {
        operationId: 'listDestinations',
        summary: 'Configured destinations with their endpoints, runtime state and message counts per state',
        responses: { '200': { description: 'Destinations', ...json(ref('Destinations')) }, ...errors },
      },
    },
    '/api/v1/destinations/{destinationId}/health': {
      get: {
        operationId: 'endpointHealth',
        summary: 'Per endpoint: attempts, success rate, p50/p95 latency and last error over a window',
        parameters: [
          idParam('destinationId', 'The destination'),
          {
            name: 'window',
            in: 'query',
            required: false,
            schema: { type: 'string', pattern: '^\\d{1,4}(m|h)$', default: '1h' },
          },
        ],
        responses: { '200': { description: 'Health', ...json(ref('Health')) }, ...errors },
      },
    },
    ...controlPaths,
    ...definitionPaths,
    ...sourcePaths,
    ...ledgerPaths,
    ...tokenPaths,
    ...portalPaths,
    '/api/v1/sources/{sourceId}/events': {
      get: {
        operationId: 'recentEvents',
        summary: 'The newest events of a source with their payload (the live stream)',
        parameters: [
          idParam('sourceId', 'The source'),
          queryLimit({ max: MAX_STREAM_SIZE, default: DEFAULT_STREAM_SIZE }),
        ],
        responses: { '200': { description: 'Events, newest first', ...json(ref('Events')) }, ...errors },
      },
    },
  },
} as const);
