import { ENVELOPE_FIELDS, REQUIRED_ENVELOPE_FIELDS, type EnvelopeFieldKind } from './envelope-contract.ts';
import { EVENT_TYPES } from './envelope.ts';

/**
 * JSON Schema (draft-07) of the event envelope (docs/reference/envelope.md), generated from
 * `ENVELOPE_FIELDS`. Registered under `<topic>-value` when a schema registry is configured, and
 * used by every consumer to validate what it reads, so an upstream producer writing straight onto
 * `sluice.events` is held to the same contract as ingest. The rules a schema does not express
 * (`messageId` form, nesting) are `envelopeContractProblem`'s.
 */
const KIND_SCHEMAS: Record<EnvelopeFieldKind, object> = {
  id: { type: 'string', minLength: 1 },
  eventType: { enum: EVENT_TYPES },
  messageId: { type: 'string', minLength: 1 },
  timestamp: { type: 'string', minLength: 1 },
  nullableId: { type: ['string', 'null'] },
  string: { type: 'string' },
  object: { type: 'object' },
};

const properties = Object.fromEntries(
  Object.entries(ENVELOPE_FIELDS).map(([name, kind]) => [name, KIND_SCHEMAS[kind]]),
);

const requireField = (type: string, required: string[]) => ({
  if: { properties: { type: { const: type } }, required: ['type'] },
  // biome-ignore lint/suspicious/noThenProperty: a JSON Schema keyword, not a thenable.
  then: { required },
});

const requireIdentity = {
  if: {
    properties: { type: { enum: ['identify', 'track', 'page', 'screen', 'group', 'delete'] } },
    required: ['type'],
  },
  // biome-ignore lint/suspicious/noThenProperty: a JSON Schema keyword, not a thenable.
  then: {
    anyOf: [
      { required: ['userId'], properties: { userId: { type: 'string', minLength: 1 } } },
      { required: ['anonymousId'], properties: { anonymousId: { type: 'string', minLength: 1 } } },
    ],
  },
};

export const envelopeJsonSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://sluice.dev/schemas/event-envelope.json',
  title: 'SluiceEventEnvelope',
  type: 'object',
  required: [...REQUIRED_ENVELOPE_FIELDS],
  properties,
  allOf: [
    requireIdentity,
    requireField('track', ['event']),
    requireField('group', ['groupId']),
    requireField('alias', ['userId', 'previousId']),
    requireField('delete', ['userId']),
  ],
  additionalProperties: true,
} as const;
