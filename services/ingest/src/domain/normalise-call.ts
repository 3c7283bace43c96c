import { isCallType, type CallType, type EventEnvelope, type JsonObject, isJsonObject } from '@sluice/envelope';
import { REJECT_CODES, type CallRejection } from './call-rejection.ts';
import { normaliseTimes } from './timestamps.ts';

/** What a request contributes to each of its calls. */
export interface RequestFacts {
  sourceId: string;
  /** Server clock at arrival, epoch ms. */
  receivedAt: number;
  /** Client address for `context.ip` (socket or trusted X-Forwarded-For). */
  ip?: string;
  /** Batch-level fields merged under each call's own (docs/reference/tracking-api.md). */
  batchContext?: JsonObject;
  batchIntegrations?: JsonObject;
  batchSentAt?: unknown;
  /** The route's type for single-call routes (`/v1/track` → `track`); undefined on batch routes. */
  routeType?: CallType;
  /** Largest serialised call in bytes (docs/reference/limits.md: 32 KB). */
  maxCallBytes: number;
  /** True when the whole body is so small that no call can exceed `maxCallBytes`. */
  skipSizeCheck?: boolean;
  newMessageId: () => string;
}

export type NormaliseResult = { ok: true; envelope: EventEnvelope } | { ok: false; rejection: CallRejection };

/** A Segment id: a non-empty string, or a number (sent by some clients) as a string. */
function idOf(v: unknown): string | undefined {
  if (typeof v === 'string') return v.length > 0 ? v : undefined;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

// `context`, `integrations`, `properties`, `traits` must be objects and `event`, `name`,
// `category` strings when present (null counts as absent); checked by name, not in a loop over
// key strings, which is measurably slower at ~100 calls per request.
const notObject = (v: unknown) => v !== undefined && v !== null && !isJsonObject(v);
const notString = (v: unknown) => v !== undefined && v !== null && typeof v !== 'string';

// A module-level function, not a closure made per call.
const rejection = (
  index: number,
  code: CallRejection['code'],
  message: string,
): { ok: false; rejection: CallRejection } => ({ ok: false, rejection: { index, code, message } });

/** A call that passed the checks of docs/reference/tracking-api.md, with what the checks worked out. */
export interface CheckedCall {
  call: JsonObject;
  type: CallType;
  userId: string | undefined;
  anonymousId: string | undefined;
}

export type CheckResult = { ok: true; checked: CheckedCall } | { ok: false; rejection: CallRejection };

/**
 * The checks of docs/reference/tracking-api.md for one call. `sentChars`, the length of the call's text as sent when
 * known, spares the size check's serialisation when the call cannot be near the limit.
 */
export function checkCall(call: unknown, index: number, facts: RequestFacts, sentChars?: number): CheckResult {
  if (!isJsonObject(call)) return rejection(index, REJECT_CODES.notAnObject, 'call is not a JSON object');
  if (!facts.skipSizeCheck && !(sentChars !== undefined && sentChars * MAX_SERIALISED_PER_CHAR <= facts.maxCallBytes)) {
    const bytes = Buffer.byteLength(JSON.stringify(call));
    if (bytes > facts.maxCallBytes)
      return rejection(
        index,
        REJECT_CODES.tooLarge,
        `call is ${bytes} bytes; at most ${facts.maxCallBytes} are allowed`,
      );
  }
  const type = facts.routeType ?? call.type;
  if (!isCallType(type))
    return rejection(index, REJECT_CODES.unknownType, `unknown call type ${JSON.stringify(type ?? null)}`);

  const badObject = notObject(call.context)
    ? 'context'
    : notObject(call.integrations)
      ? 'integrations'
      : notObject(call.properties)
        ? 'properties'
        : notObject(call.traits)
          ? 'traits'
          : undefined;
  if (badObject) return rejection(index, REJECT_CODES.invalidField, `${badObject} must be an object`);
  const badString = notString(call.event)
    ? 'event'
    : notString(call.name)
      ? 'name'
      : notString(call.category)
        ? 'category'
        : undefined;
  if (badString) return rejection(index, REJECT_CODES.invalidField, `${badString} must be a string`);

  const userId = idOf(call.userId);
  const anonymousId = idOf(call.anonymousId);
  if (type === 'alias') {
    if (!userId || !idOf(call.previousId))
      return rejection(index, REJECT_CODES.missingAliasIds, 'alias needs userId and previousId');
  } else if (!userId && !anonymousId) {
    return rejection(index, REJECT_CODES.missingIdentity, `${type} needs userId or anonymousId`);
  }
  if (type === 'track' && (typeof call.event !== 'string' || call.event.length === 0))
    return rejection(index, REJECT_CODES.missingEvent, 'track needs event');
  if (type === 'group' && !idOf(call.groupId))
    return rejection(index, REJECT_CODES.missingGroupId, 'group needs groupId');
  return { ok: true, checked: { call, type, userId, anonymousId } };
}

/**
 * JSON.stringify writes at most this many bytes per character of JSON text as sent: 3 for a
 * character of a string (UTF-8), 5.25 for a number (`9e20` is written `900000000000000000000`).
 */
const MAX_SERIALISED_PER_CHAR = 6;

/** One field the envelope sets, with its value. */
export type EnvelopeField = [key: string, value: unknown];

/** Stands for `context` taken from the call's text as sent, plus `ip` when it needs one (`envelope-splice.ts`). */
export const CONTEXT_AS_SENT = Symbol('context as sent');

/**
 * The fields the envelope of docs/reference/envelope.md sets on top of the call's own (minus `OMITTED_FIELDS`), in
 * the order they are set: a field the call has keeps the call's position, the others follow in
 * this order. With `contextAsSent` (no batch context, the call's context is an object), context
 * is `CONTEXT_AS_SENT` instead of a merged copy.
 */
export function envelopeFields(
  { call, type, userId, anonymousId }: CheckedCall,
  facts: RequestFacts,
  contextAsSent = false,
): EnvelopeField[] {
  const times = normaliseTimes({
    timestamp: call.timestamp,
    sentAt: call.sentAt ?? facts.batchSentAt,
    receivedAt: facts.receivedAt,
  });
  const fields: EnvelopeField[] = [
    ['sourceId', facts.sourceId],
    ['type', type],
    ['messageId', idOf(call.messageId) ?? facts.newMessageId()],
    ['userId', userId ?? null],
  ];
  if (anonymousId !== undefined) fields.push(['anonymousId', anonymousId]);
  fields.push(['timestamp', times.timestamp], ['receivedAt', times.receivedAt]);
  if (times.sentAt !== undefined) fields.push(['sentAt', times.sentAt]);
  if (times.originalTimestamp !== undefined) fields.push(['originalTimestamp', times.originalTimestamp]);
  fields.push(['context', contextAsSent ? CONTEXT_AS_SENT : mergedContext(call, facts)]);
  if (facts.batchIntegrations || isJsonObject(call.integrations))
    fields.push(['integrations', { ...facts.batchIntegrations, ...(call.integrations as JsonObject | undefined) }]);
  if (type === 'group') fields.push(['groupId', idOf(call.groupId)]);
  if (type === 'alias') fields.push(['previousId', idOf(call.previousId)]);
  return fields;
}

/** The batch context under the call's own, plus the client address when the call gives none. */
function mergedContext(call: JsonObject, facts: RequestFacts): JsonObject {
  const context: JsonObject = facts.batchContext
    ? { ...facts.batchContext, ...(call.context as JsonObject | undefined) }
    : { ...(call.context as JsonObject | undefined) };
  if (facts.ip !== undefined && context.ip === undefined) context.ip = facts.ip;
  return context;
}

/** Fields of a call never copied as sent: replaced by normalised values, or secret (`writeKey`). `__proto__` cannot be assigned as data. */
export const OMITTED_FIELDS: ReadonlySet<string> = new Set([
  'writeKey',
  'timestamp',
  'sentAt',
  'userId',
  'anonymousId',
  'messageId',
  '__proto__',
]);

/**
 * Validates one call and turns it into the envelope of docs/reference/envelope.md, pure (clock and id generator
 * come in `facts`). Unknown fields are kept; `writeKey` never is.
 */
export function normaliseCall(call: unknown, index: number, facts: RequestFacts): NormaliseResult {
  const result = checkCall(call, index, facts);
  return result.ok ? { ok: true, envelope: buildEnvelope(result.checked, facts) } : result;
}

/**
 * The envelope object of a checked call: the call's own fields first, in their order (minus
 * `OMITTED_FIELDS`), then `envelopeFields` assigned (a field the call has keeps its position).
 * One object built by assignment, cheaper than a rest-destructure plus spreads.
 */
export function buildEnvelope(checked: CheckedCall, facts: RequestFacts): EventEnvelope {
  const source = checked.call;
  const envelope = {} as EventEnvelope & JsonObject;
  for (const key in source) {
    if (!OMITTED_FIELDS.has(key)) envelope[key] = source[key];
  }
  for (const [key, value] of envelopeFields(checked, facts)) envelope[key] = value;
  return envelope;
}
