/**
 * JSON Schema (draft-07) of the event envelope (docs/reference/envelope.md). Registered under `<topic>-value` when a
 * schema registry is configured, and used by every consumer to validate what it reads, so an
 * upstream producer writing straight onto `sluice.events` is held to the same contract as ingest.
 */
const stringOrNull = { type: ['string', 'null'] } as const;
const object = { type: 'object' } as const;

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
  required: ['sourceId', 'type', 'messageId', 'timestamp'],
  properties: {
    sourceId: { type: 'string', minLength: 1 },
    type: { enum: ['identify', 'track', 'page', 'screen', 'group', 'alias', 'delete'] },
    messageId: { type: 'string', minLength: 1 },
    timestamp: { type: 'string', minLength: 1 },
    userId: stringOrNull,
    anonymousId: stringOrNull,
    receivedAt: { type: 'string' },
    sentAt: { type: 'string' },
    originalTimestamp: { type: 'string' },
    context: object,
    integrations: object,
    event: { type: 'string' },
    properties: object,
    traits: object,
    name: { type: 'string' },
    category: { type: 'string' },
    groupId: { type: 'string' },
    previousId: { type: 'string' },
  },
  allOf: [
    requireIdentity,
    requireField('track', ['event']),
    requireField('group', ['groupId']),
    requireField('alias', ['userId', 'previousId']),
    requireField('delete', ['userId']),
  ],
  additionalProperties: true,
} as const;
