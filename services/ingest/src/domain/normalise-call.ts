import { isCallType, type CallType, type EventEnvelope, type JsonObject } from '@sluice/envelope';
import { REJECT_CODES, type CallRejection } from './call-rejection.ts';
import { normaliseTimes } from './timestamps.ts';

/** What a request contributes to each of its calls. */
export interface RequestFacts {
  sourceId: string;
  /** Server clock at arrival, epoch ms. */
  receivedAt: number;
  /** Client address for `context.ip` (socket or trusted X-Forwarded-For). */
  ip?: string;
  /** Batch-level fields merged under each call's own (SPEC §3). */
  batchContext?: JsonObject;
  batchIntegrations?: JsonObject;
  batchSentAt?: unknown;
  /** The route's type for single-call routes (`/v1/track` → `track`); undefined on batch routes. */
  routeType?: CallType;
  /** Largest serialised call in bytes (SPEC §13: 32 KB). */
  maxCallBytes: number;
  /** True when the whole body is so small that no call can exceed `maxCallBytes`. */
  skipSizeCheck?: boolean;
  newMessageId: () => string;
}

export type NormaliseResult = { ok: true; envelope: EventEnvelope } | { ok: false; rejection: CallRejection };

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A Segment id: a non-empty string, or a number (sent by some clients) as a string. */
function idOf(v: unknown): string | undefined {
  if (typeof v === 'string') return v.length > 0 ? v : undefined;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

/** Fields of a call never copied as sent: replaced by normalised values, or secret (`writeKey`). `__proto__` cannot be assigned as data. */
const OMITTED = new Set(['writeKey', 'timestamp', 'sentAt', 'userId', 'anonymousId', 'messageId', '__proto__']);

// `context`, `integrations`, `properties`, `traits` must be objects and `event`, `name`,
// `category` strings when present (null counts as absent); checked by name, not in a loop over
// key strings, which is measurably slower at ~100 calls per request.
const notObject = (v: unknown) => v !== undefined && v !== null && !isObject(v);
const notString = (v: unknown) => v !== undefined && v !== null && typeof v !== 'string';

// A module-level function, not a closure made per call: tsx wraps each named closure in a costly `__name` call.
const rejection = (index: number, code: CallRejection['code'], message: string): NormaliseResult => ({ ok: false, rejection: { index, code, message } });

/**
 * Validates one call and turns it into the envelope of SPEC §4, pure (clock and id generator
 * come in `facts`). Unknown fields are kept; `writeKey` never is.
 */
export function normaliseCall(call: unknown, index: number, facts: RequestFacts): NormaliseResult {
  if (!isObject(call)) return rejection(index, REJECT_CODES.notAnObject, 'call is not a JSON object');
  if (!facts.skipSizeCheck) {
    const bytes = Buffer.byteLength(JSON.stringify(call));
    if (bytes > facts.maxCallBytes) return rejection(index, REJECT_CODES.tooLarge, `call is ${bytes} bytes; at most ${facts.maxCallBytes} are allowed`);
  }
  const type = facts.routeType ?? call.type;
  if (!isCallType(type)) return rejection(index, REJECT_CODES.unknownType, `unknown call type ${JSON.stringify(type ?? null)}`);

  const badObject = notObject(call.context) ? 'context' : notObject(call.integrations) ? 'integrations' : notObject(call.properties) ? 'properties' : notObject(call.traits) ? 'traits' : undefined;
  if (badObject) return rejection(index, REJECT_CODES.invalidField, `${badObject} must be an object`);
  const badString = notString(call.event) ? 'event' : notString(call.name) ? 'name' : notString(call.category) ? 'category' : undefined;
  if (badString) return rejection(index, REJECT_CODES.invalidField, `${badString} must be a string`);

  const userId = idOf(call.userId);
  const anonymousId = idOf(call.anonymousId);
  if (type === 'alias') {
    if (!userId || !idOf(call.previousId)) return rejection(index, REJECT_CODES.missingAliasIds, 'alias needs userId and previousId');
  } else if (!userId && !anonymousId) {
    return rejection(index, REJECT_CODES.missingIdentity, `${type} needs userId or anonymousId`);
  }
  if (type === 'track' && (typeof call.event !== 'string' || call.event.length === 0)) return rejection(index, REJECT_CODES.missingEvent, 'track needs event');
  if (type === 'group' && !idOf(call.groupId)) return rejection(index, REJECT_CODES.missingGroupId, 'group needs groupId');

  const times = normaliseTimes({ timestamp: call.timestamp, sentAt: call.sentAt ?? facts.batchSentAt, receivedAt: facts.receivedAt });
  const context: JsonObject = facts.batchContext ? { ...facts.batchContext, ...(call.context as JsonObject | undefined) } : { ...(call.context as JsonObject | undefined) };
  if (facts.ip !== undefined && context.ip === undefined) context.ip = facts.ip;
  const integrations = facts.batchIntegrations || isObject(call.integrations) ? { ...facts.batchIntegrations, ...(call.integrations as JsonObject | undefined) } : undefined;

  // The call's own fields first, in their order (minus those replaced below), then the
  // envelope's; one object built by assignment, which is cheaper than a rest-destructure plus
  // spreads at ~100 calls per request. Fields set below keep the position the call gave them.
  const envelope = {} as EventEnvelope & JsonObject;
  for (const key in call) {
    if (!OMITTED.has(key)) envelope[key] = call[key];
  }
  envelope.sourceId = facts.sourceId;
  envelope.type = type;
  envelope.messageId = idOf(call.messageId) ?? facts.newMessageId();
  envelope.userId = userId ?? null;
  if (anonymousId !== undefined) envelope.anonymousId = anonymousId;
  envelope.timestamp = times.timestamp;
  envelope.receivedAt = times.receivedAt;
  if (times.sentAt !== undefined) envelope.sentAt = times.sentAt;
  if (times.originalTimestamp !== undefined) envelope.originalTimestamp = times.originalTimestamp;
  envelope.context = context;
  if (integrations) envelope.integrations = integrations;
  if (type === 'group') envelope.groupId = idOf(call.groupId);
  if (type === 'alias') envelope.previousId = idOf(call.previousId);
  return { ok: true, envelope };
}
