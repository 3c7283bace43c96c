import { isJsonObject, type JsonObject } from '@sluice/envelope';
import { keyCount, memberKey, type ObjectMembers } from './json-members.ts';
import {
  CONTEXT_AS_SENT,
  envelopeFields,
  OMITTED_FIELDS,
  type CheckedCall,
  type RequestFacts,
} from './normalise-call.ts';

/**
 * The JSON text of a call's envelope (docs/reference/envelope.md) built from the call's text as sent: the call's
 * own members are copied as they are (minus `OMITTED_FIELDS`), each envelope field replaces the
 * member of its name in place, and the rest follow in order. It parses to the same value, keys
 * in the same order, as `JSON.stringify` of `normaliseCall`'s envelope; it only spares
 * serialising again what `JSON.parse` just read. For text that plain `JSON.parse` accepted
 * without dropping anything (`parseJsonBody`) and a call without repeated keys.
 *
 * Without a batch context, the call's context is copied as sent (plus `ip` when it has none);
 * with one, the merged context is serialised.
 */
export function spliceEnvelope(
  text: string,
  members: ObjectMembers,
  checked: CheckedCall,
  facts: RequestFacts,
): string {
  const { call } = checked;
  const fields = envelopeFields(checked, facts, !facts.batchContext && isJsonObject(call.context));
  const at = members.at;
  let used = 0; // bit f: fields[f] was written in place (at most 13 fields)
  let out = '{';
  for (let m = 0; m < at.length; m += 4) {
    const key = memberKey(text, members, m);
    if (OMITTED_FIELDS.has(key)) continue;
    let f = 0;
    while (f < fields.length && fields[f]![0] !== key) f++;
    if (out.length > 1) out += ',';
    if (f === fields.length) {
      out += text.slice(at[m], at[m + 3]);
    } else {
      used |= 1 << f;
      const value = fields[f]![1];
      out +=
        text.slice(at[m], at[m + 1]) +
        ':' +
        (value === CONTEXT_AS_SENT
          ? contextAsSent(text, at[m + 2]!, at[m + 3]!, call.context as JsonObject, facts.ip)
          : JSON.stringify(value));
    }
  }
  for (let f = 0; f < fields.length; f++) {
    if (used & (1 << f)) continue;
    const [key, value] = fields[f]!;
    // CONTEXT_AS_SENT is only used for a call that has a context member (met above).
    out += (out.length > 1 ? ',"' : '"') + key + '":' + JSON.stringify(value);
  }
  return out + '}';
}

/** The context object's text as sent, with `ip` added as its last key when it has none. */
function contextAsSent(text: string, start: number, end: number, context: JsonObject, ip: string | undefined): string {
  if (ip === undefined || context.ip !== undefined) return text.slice(start, end);
  // `end - 1` is the object's closing brace.
  return text.slice(start, end - 1) + (keyCount(context) === 0 ? '' : ',') + '"ip":' + JSON.stringify(ip) + '}';
}
