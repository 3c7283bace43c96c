import { DEAD_REASONS } from '@sluice/envelope';
import {
  MAX_ID_LENGTH,
  MAX_VIEW_ATTEMPTS,
  MAX_VIEW_BATCH_EVENTS,
  MAX_VIEW_REJECTED,
  MAX_VIEW_REPLAYS,
} from '../../constants.ts';
import { DELIVERY_STATES } from '../../domain/state.ts';
import { eventAsText, unstoredList } from './openapi-event.ts';

/** The parts of the OpenAPI document (openapi.ts) that its schemas and parameters share. */
export const id = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_ID_LENGTH,
  description: 'Any characters but U+0000 (in a path: one percent-encoded segment)',
} as const;
export const time = { type: 'string', format: 'date-time' } as const;
export const nullable = (schema: object) => ({ oneOf: [schema, { type: 'null' }] });
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
/** An object whose every property is required (in the order they are listed). */
export const allRequired = (properties: Record<string, object>) => ({
  type: 'object',
  required: Object.keys(properties),
  properties,
});
export const json = (schema: object) => ({ content: { 'application/json': { schema } } });
export const errors = {
  '400': {
    description: 'A parameter or the body is invalid, or a query parameter the route does not take (`field` names it)',
    ...json(ref('Error')),
  },
  '401': { description: 'Missing, wrong or expired bearer token', ...json(ref('Error')) },
  '429': {
    description: 'Too many failed authentications from this client address: wait `Retry-After` seconds',
    ...json(ref('Error')),
  },
  '500': {
    description: 'An internal error, logged by the service with the `requestId` of the answer',
    ...json(ref('Error')),
  },
};
export const idParam = (name: string, description: string) => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: id,
});
export const queryId = (name: string, description: string) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema: id,
});
/** The `limit` query parameter of a paged list: 1 up to the page's most, its default when absent. */
export const queryLimit = (page: { max: number; default: number }) => ({
  name: 'limit',
  in: 'query',
  required: false,
  schema: { type: 'integer', minimum: 1, maximum: page.max, default: page.default },
});
/** The `cursor` query parameter of a paged list: the `nextCursor` of the page before. */
export const queryCursor = {
  name: 'cursor',
  in: 'query',
  required: false,
  description: '`nextCursor` of the previous page',
  schema: { type: 'string', maxLength: 1024 },
};
/** The `nextCursor` of a page. */
export const nextCursor = {
  oneOf: [{ type: 'string' }, { type: 'null' }],
  description: 'Pass as `cursor` for the next page; null on the last page',
};
/** The query parameters of a paged list: `limit` (its page's bounds) and `cursor`. */
export const pageParams = (page: { max: number; default: number }) => [queryLimit(page), queryCursor];
/** A page of a list: its items under `name`, and the `nextCursor`. */
export const pageOf = (name: string, items: object) => ({
  type: 'object',
  required: [name, 'nextCursor'],
  properties: { [name]: { type: 'array', items }, nextCursor },
});
/** Who did an action or made a change, by token id (docs/reference/tokens.md, "What is recorded"). */
export const byTokenId = {
  type: 'string',
  description:
    "The id of the token that did it: a tenant token's (`tok_…`), `admin` for the admin token, a portal link's id, `sluice` for Sluice itself (auto-disable). Absent on records from before it was recorded",
};
export const queryTime = (name: string, description: string) => ({
  name,
  in: 'query',
  required: false,
  description: `${description}: an ISO 8601 date and time with its offset (\`2026-01-31T12:00:00Z\`, \`…+01:00\`) or epoch milliseconds, up to the year 9999`,
  schema: { type: 'string', maxLength: 40 },
});

/** An attempt's fields (a message's attempts, a batch's events). */
const attemptProperties = {
  destinationId: id,
  endpoint: { type: 'string' },
  attempt: { type: 'integer', minimum: 1 },
  at: time,
  outcome: { type: 'string', enum: ['success', 'retryable', 'permanent'] },
  status: nullable({ type: 'integer' }),
  error: nullable({ type: 'string' }),
  latencyMs: { type: 'number', minimum: 0 },
  responseSnippet: nullable({ type: 'string' }),
  batchId: {
    ...nullable(id),
    description: 'The batch the event went in (GET /api/v1/batches/{batchId}); null when sent alone',
  },
  batchSize: { ...nullable({ type: 'integer', minimum: 1 }), description: 'How many events that batch held' },
};

/** The schemas of the OpenAPI document (`components.schemas`). */
export const schemas = {
  Error: {
    type: 'object',
    required: ['code', 'message'],
    properties: {
      code: { type: 'string' },
      message: { type: 'string' },
      field: { type: 'string', description: 'The parameter, path segment or body field at fault (4xx)' },
      requestId: { type: 'string', description: 'On a 5xx: the id the service logged it under' },
    },
  },
  State: { type: 'string', enum: [...DELIVERY_STATES] },
  Delivery: {
    type: 'object',
    required: ['destinationId', 'state', 'stateAt', 'attempts', 'lastError', 'deadReason', 'reject'],
    properties: {
      destinationId: { ...nullable(id), description: 'null for a rejection before any destination' },
      state: ref('State'),
      stateAt: time,
      attempts: { type: 'integer', minimum: 0 },
      lastError: nullable({ type: 'string' }),
      deadReason: nullable({ type: 'string' }),
      reject: nullable({
        type: 'object',
        required: ['code', 'message', 'origin'],
        properties: { code: { type: 'string' }, message: { type: 'string' }, origin: { type: 'string' } },
      }),
    },
  },
  Attempt: allRequired(attemptProperties),
  Batch: {
    type: 'object',
    required: ['batchId', 'batchSize', 'events', 'totals'],
    properties: {
      batchId: id,
      batchSize: {
        ...nullable({ type: 'integer', minimum: 1 }),
        description: 'How many events the batch held, as its attempt records say',
      },
      events: {
        type: 'array',
        maxItems: MAX_VIEW_BATCH_EVENTS,
        description: `The first ${MAX_VIEW_BATCH_EVENTS} attempt rows that name the batch, oldest first: one per event (one per event and endpoint when the batch went to several)`,
        items: allRequired({
          sourceId: id,
          messageId: id,
          state: { ...nullable(ref('State')), description: "The event's state at that destination now" },
          ...attemptProperties,
        }),
      },
      totals: {
        type: 'object',
        required: ['attempts', 'events'],
        description: 'How many attempt rows name the batch, and about how many events (message and destination)',
        properties: { attempts: { type: 'integer', minimum: 1 }, events: { type: 'integer', minimum: 1 } },
      },
    },
  },
  Message: {
    type: 'object',
    required: [
      'sourceId',
      'messageId',
      'eventType',
      'receivedAt',
      'traceId',
      'event',
      'deliveries',
      'attempts',
      'replays',
      'rejectedValues',
      'totals',
    ],
    properties: {
      sourceId: id,
      messageId: id,
      eventType: { type: 'string' },
      receivedAt: time,
      traceId: {
        type: ['string', 'null'],
        pattern: '^[0-9a-f]{32}$',
        description:
          'The W3C trace id of the event\'s record (its traceparent header; docs/operations.md, "Following one event"); null when it had none',
      },
      event: { description: 'The event as it was on the events topic; null when only its attempts were read' },
      ...eventAsText,
      deliveries: { type: 'array', items: ref('Delivery') },
      attempts: {
        type: 'array',
        maxItems: MAX_VIEW_ATTEMPTS,
        description: `The newest ${MAX_VIEW_ATTEMPTS} attempts, oldest first (\`totals.attempts\`: all of them)`,
        items: ref('Attempt'),
      },
      replays: {
        type: 'array',
        maxItems: MAX_VIEW_REPLAYS,
        description: `The newest ${MAX_VIEW_REPLAYS} replays of this message, oldest first, bulk replays that re-injected it included`,
        items: {
          type: 'object',
          required: ['requestedAt', 'destinationId', 'replayed', 'bulk'],
          properties: {
            requestedAt: time,
            destinationId: nullable(id),
            replayed: { type: 'integer', minimum: 0 },
            bulk: {
              type: 'boolean',
              description: 'A replay of a filter (POST /api/v1/replays) that re-injected it',
            },
          },
        },
      },
      rejectedValues: {
        type: 'array',
        maxItems: MAX_VIEW_REJECTED,
        description: `The first ${MAX_VIEW_REJECTED} rejected bodies (up to 2 KB each)`,
        items: { type: 'string' },
      },
      totals: {
        type: 'object',
        required: ['attempts', 'replays', 'rejectedValues'],
        description: 'How many of each list the log holds',
        properties: {
          attempts: { type: 'integer', minimum: 0 },
          replays: { type: 'integer', minimum: 0 },
          rejectedValues: { type: 'integer', minimum: 0 },
        },
      },
      unstored: unstoredList,
    },
  },
  MessageSummary: {
    type: 'object',
    required: ['sourceId', 'messageId', 'eventType', 'receivedAt', 'deliveries'],
    properties: {
      sourceId: id,
      messageId: id,
      eventType: { type: 'string' },
      receivedAt: time,
      deliveries: {
        type: 'array',
        items: {
          type: 'object',
          required: ['destinationId', 'state'],
          properties: { destinationId: nullable(id), state: ref('State') },
        },
      },
    },
  },
  MessagePage: {
    type: 'object',
    required: ['messages', 'nextCursor'],
    properties: {
      messages: { type: 'array', items: ref('MessageSummary') },
      nextCursor: {
        ...nullable({ type: 'string' }),
        description: 'Pass as `cursor` for the next page; null on the last page',
      },
    },
  },
  EndpointHealth: allRequired({
    destinationId: id,
    endpoint: { type: 'string' },
    attempts: { type: 'integer', minimum: 0 },
    successRate: { type: 'number', minimum: 0, maximum: 1 },
    p50LatencyMs: nullable({ type: 'number' }),
    p95LatencyMs: nullable({ type: 'number' }),
    lastError: nullable({
      type: 'object',
      required: ['at', 'status', 'error'],
      properties: { at: time, status: nullable({ type: 'integer' }), error: nullable({ type: 'string' }) },
    }),
    lastAttemptAt: nullable(time),
  }),
  Health: {
    type: 'object',
    required: ['windowMs', 'since', 'endpoints'],
    properties: {
      windowMs: { type: 'integer' },
      since: time,
      endpoints: { type: 'array', items: ref('EndpointHealth') },
    },
  },
  Destinations: {
    type: 'object',
    required: ['destinations'],
    properties: {
      destinations: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'name', 'tenant', 'enabled', 'sourceIds', 'endpoints', 'states', 'state', 'endpointStates'],
          properties: {
            id,
            name: { type: 'string' },
            tenant: { type: 'string', description: 'The tenant it belongs to (docs/reference/tenants.md)' },
            enabled: { type: 'boolean' },
            sourceIds: { type: 'array', items: { type: 'string' } },
            endpoints: {
              type: 'array',
              description: 'Endpoint URLs with userinfo and query replaced by ***, as attempts name them',
              items: { type: 'string' },
            },
            states: { type: 'object', additionalProperties: { type: 'integer' } },
            state: { ...ref('ControlState'), description: 'Runtime state of the destination' },
            endpointStates: { type: 'array', items: ref('EndpointControlState') },
          },
        },
      },
    },
  },
  Events: {
    type: 'object',
    required: ['events'],
    properties: {
      events: {
        type: 'array',
        items: {
          type: 'object',
          required: ['messageId', 'eventType', 'receivedAt', 'event'],
          properties: { messageId: id, eventType: { type: 'string' }, receivedAt: time, event: {}, ...eventAsText },
        },
      },
    },
  },
  ReplayFilter: {
    type: 'object',
    additionalProperties: false,
    properties: {
      sourceId: id,
      destinationId: id,
      reason: { type: 'string', enum: [...DEAD_REASONS] },
      since: {
        type: ['string', 'integer'],
        description: 'Dead at or after: ISO 8601 with its offset, or epoch ms (up to the year 9999)',
      },
      until: {
        type: ['string', 'integer'],
        description: 'Dead before: ISO 8601 with its offset, or epoch ms (up to the year 9999)',
      },
    },
  },
  ReplayResult: {
    type: 'object',
    required: ['matched', 'replayed', 'skippedAlreadyReplayed'],
    properties: {
      matched: { type: 'integer', minimum: 0 },
      replayed: { type: 'integer', minimum: 0 },
      skippedAlreadyReplayed: { type: 'integer', minimum: 0 },
    },
  },
};
