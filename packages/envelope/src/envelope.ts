/** The six analytics call types accepted by ingest (docs/reference/tracking-api.md). */
export const CALL_TYPES = ['identify', 'track', 'page', 'screen', 'group', 'alias'] as const;
export type CallType = (typeof CALL_TYPES)[number];

/**
 * Every event type that travels on `sluice.events`: the calls plus deletion notifications
 * (docs/reference/deletions.md).
 */
export const EVENT_TYPES = [...CALL_TYPES, 'delete'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export type JsonObject = { [key: string]: unknown };

/** A JSON object: not null, not an array. */
export const isJsonObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The normalised event as it sits on `sluice.events` (docs/reference/envelope.md): the call as ingest normalised
 * it, plus `sourceId`, `receivedAt` and `messageId`. Upstream producers write the same shape.
 */
export interface EventEnvelope {
  sourceId: string;
  type: EventType;
  messageId: string;
  /** ISO 8601 UTC with milliseconds and `Z` once normalised. */
  timestamp: string;
  userId?: string | null;
  anonymousId?: string | null;
  receivedAt?: string;
  sentAt?: string;
  originalTimestamp?: string;
  context?: JsonObject;
  integrations?: JsonObject;
  event?: string;
  properties?: JsonObject;
  traits?: JsonObject;
  name?: string;
  category?: string;
  groupId?: string;
  previousId?: string;
  [key: string]: unknown;
}

export function isCallType(value: unknown): value is CallType {
  return typeof value === 'string' && (CALL_TYPES as readonly string[]).includes(value);
}

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);
}
