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

const OBJECT_FIELDS = ['context', 'integrations', 'properties', 'traits'] as const;
const STRING_FIELDS = ['event', 'name', 'category'] as const;

/**
 * Validates one call and turns it into the envelope of SPEC §4, pure (clock and id generator
 * come in `facts`). Unknown fields are kept; `writeKey` never is.
 */
export function normaliseCall(call: unknown, index: number, facts: RequestFacts): NormaliseResult {
  const reject = (code: CallRejection['code'], message: string): NormaliseResult => ({ ok: false, rejection: { index, code, message } });
  if (!isObject(call)) return reject(REJECT_CODES.notAnObject, 'call is not a JSON object');
  if (!facts.skipSizeCheck) {
    const bytes = Buffer.byteLength(JSON.stringify(call));
    if (bytes > facts.maxCallBytes) return reject(REJECT_CODES.tooLarge, `call is ${bytes} bytes; at most ${facts.maxCallBytes} are allowed`);
  }
  const type = facts.routeType ?? call.type;
  if (!isCallType(type)) return reject(REJECT_CODES.unknownType, `unknown call type ${JSON.stringify(type ?? null)}`);

  for (const field of OBJECT_FIELDS) {
    if (call[field] !== undefined && call[field] !== null && !isObject(call[field])) return reject(REJECT_CODES.invalidField, `${field} must be an object`);
  }
  for (const field of STRING_FIELDS) {
    if (call[field] !== undefined && call[field] !== null && typeof call[field] !== 'string') return reject(REJECT_CODES.invalidField, `${field} must be a string`);
  }

  const userId = idOf(call.userId);
  const anonymousId = idOf(call.anonymousId);
  if (type === 'alias') {
    if (!userId || !idOf(call.previousId)) return reject(REJECT_CODES.missingAliasIds, 'alias needs userId and previousId');
  } else if (!userId && !anonymousId) {
    return reject(REJECT_CODES.missingIdentity, `${type} needs userId or anonymousId`);
  }
  if (type === 'track' && (typeof call.event !== 'string' || call.event.length === 0)) return reject(REJECT_CODES.missingEvent, 'track needs event');
  if (type === 'group' && !idOf(call.groupId)) return reject(REJECT_CODES.missingGroupId, 'group needs groupId');

  const { writeKey: _writeKey, timestamp, sentAt, userId: _u, anonymousId: _a, messageId: _m, ...rest } = call;
  const times = normaliseTimes({ timestamp, sentAt: sentAt ?? facts.batchSentAt, receivedAt: facts.receivedAt });
  const context: JsonObject = { ...facts.batchContext, ...(isObject(call.context) ? call.context : {}) };
  if (facts.ip !== undefined && context.ip === undefined) context.ip = facts.ip;
  const integrations = facts.batchIntegrations || isObject(call.integrations) ? { ...facts.batchIntegrations, ...(call.integrations as JsonObject | undefined) } : undefined;

  const envelope: EventEnvelope = {
    ...rest,
    sourceId: facts.sourceId,
    type,
    messageId: idOf(call.messageId) ?? facts.newMessageId(),
    userId: userId ?? null,
    ...(anonymousId !== undefined && { anonymousId }),
    ...times,
    context,
    ...(integrations && { integrations }),
    ...(type === 'group' && { groupId: idOf(call.groupId) }),
    ...(type === 'alias' && { previousId: idOf(call.previousId) }),
  };
  return { ok: true, envelope };
}
