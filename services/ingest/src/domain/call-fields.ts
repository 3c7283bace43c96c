import {
  ENVELOPE_FIELDS,
  isDeliverableMessageId,
  isJsonObject,
  MESSAGE_ID_RULE,
  type EnvelopeFieldName,
  type JsonObject,
} from '@sluice/envelope';
import { REJECT_CODES, type RejectCode } from './call-rejection.ts';

/**
 * A call's fields read against the envelope's (`ENVELOPE_FIELDS` in `@sluice/envelope`, the one
 * description both ingest and every consumer use), so that a call ingest accepts makes an
 * envelope the deliverer can route, render and sign (docs/ingest.md, "What a call may hold"):
 * - `null` in any envelope field counts as absent (real clients send `"category": null`,
 *   `"integrations": null`, ...): the member is left out of the envelope.
 * - An id (`userId`, `anonymousId`, `groupId`, `previousId`, `messageId`) is a string or a
 *   finite number, written into the envelope as a string.
 * - `messageId` is sent as the `X-Message-Id` header: `MESSAGE_ID_RULE`, else the call is refused.
 * - Every other field has the envelope's kind (string or object), else the call is refused.
 * - `sourceId`, `type`, `timestamp`, `receivedAt` and `sentAt` are set by ingest whatever the call
 *   sends (an unreadable `timestamp` or `sentAt` counts as absent).
 */

/** Fields whose value the envelope takes from ingest, not from the call. */
const SET_BY_INGEST: ReadonlySet<string> = new Set(['sourceId', 'type', 'timestamp', 'receivedAt', 'sentAt']);
const IDS: ReadonlySet<string> = new Set(['userId', 'anonymousId', 'groupId', 'previousId']);

type Rule = 'string' | 'object' | 'id' | 'messageId';
const RULES: readonly (readonly [EnvelopeFieldName, Rule])[] = (
  Object.entries(ENVELOPE_FIELDS) as [EnvelopeFieldName, string][]
)
  .filter(([name]) => !SET_BY_INGEST.has(name))
  .map(
    ([name, kind]) =>
      [name, name === 'messageId' ? 'messageId' : IDS.has(name) ? 'id' : (kind as 'string' | 'object')] as const,
  );

const RULE_TEXT: Record<Rule, string> = {
  string: 'a string',
  object: 'an object',
  id: 'a string or a number',
  messageId: `a number or ${MESSAGE_ID_RULE}`,
};

function fits(rule: Rule, value: unknown): boolean {
  switch (rule) {
    case 'string':
      return typeof value === 'string';
    case 'object':
      return isJsonObject(value);
    case 'id':
      return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
    case 'messageId':
      return (
        (typeof value === 'number' && Number.isFinite(value)) ||
        (typeof value === 'string' && (value === '' || isDeliverableMessageId(value)))
      );
  }
}

export type FieldsResult =
  | { ok: true; nulls: ReadonlySet<string> | undefined }
  | { ok: false; code: RejectCode; message: string };

/** Checks every envelope field the call sends; `nulls` are the fields sent as `null` (left out). */
export function checkCallFields(call: JsonObject): FieldsResult {
  let nulls: Set<string> | undefined;
  for (const [name, rule] of RULES) {
    const value = call[name];
    if (value === undefined) continue;
    if (value === null) {
      (nulls ??= new Set()).add(name);
      continue;
    }
    if (!fits(rule, value)) {
      const code = rule === 'messageId' ? REJECT_CODES.invalidMessageId : REJECT_CODES.invalidField;
      return { ok: false, code, message: `${name} must be ${RULE_TEXT[rule]}` };
    }
  }
  return { ok: true, nulls };
}

/** A Segment id: a non-empty string, or a finite number (sent by some clients) as a string. */
export function idOf(v: unknown): string | undefined {
  if (typeof v === 'string') return v.length > 0 ? v : undefined;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}
