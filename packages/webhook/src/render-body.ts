import { parseCanonicalTimestamp, type EventEnvelope, type JsonObject } from '@sluice/envelope';
import { MAX_BODY_DEPTH, nestingExceeds } from './nesting.ts';

export type RenderResult =
  | { ok: true; body: JsonObject }
  | { ok: false; code: 'invalid_timestamp' | 'body_too_deep'; message: string };

/** ISO 8601 UTC with milliseconds and `Z` (docs/reference/delivery.md), or undefined when `value` is not a date. */
export function toIsoMillis(value: string): string | undefined {
  // What ingest writes is already in the output form (a real date, milliseconds, `Z`): itself.
  if (parseCanonicalTimestamp(value) !== undefined) return value;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return undefined;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

const present = <T>(value: T | undefined | null): value is T => value !== undefined && value !== null;

/**
 * The webhook body of an event, exactly as docs/reference/delivery.md shapes it per type, or why it has none: a
 * timestamp that is not a date, or a body nested deeper than `MAX_BODY_DEPTH` (which `encodeBody`
 * could not encode). Pure: the same envelope always gives the same result (and `encodeBody` the
 * same bytes).
 */
export function renderBody(event: EventEnvelope): RenderResult {
  const result = shapeBody(event);
  if (result.ok && nestingExceeds(result.body, MAX_BODY_DEPTH)) {
    return {
      ok: false,
      code: 'body_too_deep',
      message: `body nests arrays or objects more than ${MAX_BODY_DEPTH} levels deep`,
    };
  }
  return result;
}

function shapeBody(event: EventEnvelope): RenderResult {
  const timestamp = toIsoMillis(event.timestamp);
  if (timestamp === undefined) {
    return {
      ok: false,
      code: 'invalid_timestamp',
      message: `timestamp ${JSON.stringify(event.timestamp)} is not an ISO 8601 date`,
    };
  }
  if (event.type === 'delete') return { ok: true, body: { type: 'delete', userId: event.userId ?? null, timestamp } };

  const body: JsonObject = {
    version: 1,
    type: event.type,
    userId: event.userId ?? null,
    timestamp,
    context: event.context ?? {},
    messageId: event.messageId,
  };
  if (typeof event.anonymousId === 'string' && event.anonymousId !== '') body.anonymousId = event.anonymousId;

  switch (event.type) {
    case 'page':
      body.properties = event.properties ?? {};
      if (present(event.name)) body.name = event.name;
      if (present(event.category)) body.category = event.category;
      break;
    case 'screen':
      if (present(event.name)) body.name = event.name;
      break;
    case 'identify':
      body.traits = event.traits ?? {};
      break;
    case 'track':
      body.event = event.event;
      body.properties = event.properties ?? {};
      break;
    case 'group':
      body.groupId = event.groupId;
      body.traits = event.traits ?? {};
      break;
    case 'alias':
      body['Previous ID'] = event.previousId;
      body['User ID'] = event.userId;
      break;
  }
  return { ok: true, body };
}

/** The exact bytes sent (and signed): UTF-8 JSON of the rendered body. */
export function encodeBody(body: JsonObject): Buffer {
  return Buffer.from(JSON.stringify(body), 'utf8');
}
