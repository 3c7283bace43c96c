import {
  isCallType,
  nestingProblem,
  type CallType,
  type EventEnvelope,
  type JsonObject,
  isJsonObject,
} from '@sluice/envelope';
import { checkCallFields, idOf } from './call-fields.ts';
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
  /** Largest stored envelope (the record value) in bytes (docs/reference/limits.md: 32 KB per call). */
  maxCallBytes: number;
  newMessageId: () => string;
}

export type NormaliseResult = { ok: true; envelope: EventEnvelope } | { ok: false; rejection: CallRejection };

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
  /** Envelope fields the call sent as `null`: absent from the envelope. */
  nulls: ReadonlySet<string> | undefined;
}

export type CheckResult = { ok: true; checked: CheckedCall } | { ok: false; rejection: CallRejection };

/**
 * The checks of docs/reference/tracking-api.md for one call, plus what makes its envelope deliverable: nesting and
 * numbers (`nestingProblem`, walked before anything serialises the call) and the fields against
 * the envelope's (`checkCallFields`). The size limit applies to the stored envelope (`sizeRejection`).
 */
export function checkCall(call: unknown, index: number, facts: RequestFacts): CheckResult {
  if (!isJsonObject(call)) return rejection(index, REJECT_CODES.notAnObject, 'call is not a JSON object');
  const type = facts.routeType ?? call.type;
  if (!isCallType(type)) return rejection(index, REJECT_CODES.unknownType, unknownTypeMessage(type));
  const nesting = nestingProblem(call);
  if (nesting)
    return rejection(
      index,
      nesting.code === 'too_deep' ? REJECT_CODES.tooDeep : REJECT_CODES.numberOutOfRange,
      nesting.message,
    );
  const fields = checkCallFields(call);
  if (!fields.ok) return rejection(index, fields.code, fields.message);

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
  return { ok: true, checked: { call, type, userId, anonymousId, nulls: fields.nulls } };
}

/** The type as sent, quoted and cut short: it is answered to the client, never used as a label. */
function unknownTypeMessage(type: unknown): string {
  if (typeof type !== 'string')
    return `unknown call type ${type === undefined ? '(missing)' : `(a ${type === null ? 'null' : typeof type})`}`;
  return `unknown call type ${JSON.stringify(type.length > 40 ? `${type.slice(0, 40)}…` : type)}`;
}

/** The call-too-large rejection when the stored envelope is over the limit (bytes of its UTF-8 text). */
export function sizeRejection(
  value: string | Buffer,
  index: number,
  maxBytes: number,
): { ok: false; rejection: CallRejection } | undefined {
  // A string's UTF-8 takes at most 3 bytes per UTF-16 unit: short text needs no count.
  if (typeof value === 'string' && value.length * 3 <= maxBytes) return undefined;
  const bytes = typeof value === 'string' ? Buffer.byteLength(value) : value.length;
  if (bytes <= maxBytes) return undefined;
  return rejection(index, REJECT_CODES.tooLarge, `call is ${bytes} bytes once stored; at most ${maxBytes} are allowed`);
}

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
  // Ids are written as strings whatever the type (a number groupId on a track call too).
  const groupId = idOf(call.groupId);
  if (groupId !== undefined) fields.push(['groupId', groupId]);
  const previousId = idOf(call.previousId);
  if (previousId !== undefined) fields.push(['previousId', previousId]);
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
 * come in `facts`). Unknown fields are kept; `writeKey` never is; envelope fields sent as `null`
 * are left out.
 */
export function normaliseCall(call: unknown, index: number, facts: RequestFacts): NormaliseResult {
  const result = checkCall(call, index, facts);
  if (!result.ok) return result;
  const envelope = buildEnvelope(result.checked, facts);
  return sizeRejection(JSON.stringify(envelope), index, facts.maxCallBytes) ?? { ok: true, envelope };
}

/**
 * The envelope object of a checked call: the call's own fields first, in their order (minus
 * `OMITTED_FIELDS`), then `envelopeFields` assigned (a field the call has keeps its position).
 * One object built by assignment, cheaper than a rest-destructure plus spreads.
 */
export function buildEnvelope(checked: CheckedCall, facts: RequestFacts): EventEnvelope {
  const source = checked.call;
  const { nulls } = checked;
  const envelope = {} as EventEnvelope & JsonObject;
  for (const key in source) {
    if (!OMITTED_FIELDS.has(key) && !nulls?.has(key)) envelope[key] = source[key];
  }
  for (const [key, value] of envelopeFields(checked, facts)) envelope[key] = value;
  return envelope;
}
