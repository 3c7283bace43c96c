import { isJsonObject, type JsonObject } from '@sluice/envelope';
import { keyCount, type ObjectMembers } from './json-members.ts';
import {
  CONTEXT_AS_SENT,
  envelopeFields,
  OMITTED_FIELDS,
  type CheckedCall,
  type RequestFacts,
} from './normalise-call.ts';
import { jsonText } from './json-text.ts';
import { specialKeyAt } from './special-keys.ts';

/**
 * The JSON text of a call's envelope (docs/reference/envelope.md) built from the call's text as sent: the call's
 * own members are copied as they are (minus `OMITTED_FIELDS` and envelope fields sent as `null`), each envelope field replaces the
 * member of its name in place, and the rest follow in order. It parses to the same value, keys
 * in the same order, as `JSON.stringify` of `normaliseCall`'s envelope; it only spares
 * serialising again what `JSON.parse` just read. For text that plain `JSON.parse` accepted
 * without dropping anything (`parseJsonBody`) and a call without repeated keys.
 *
 * Without a batch context, the call's context is copied as sent (plus `ip` when it has none);
 * with one, the merged context is serialised.
 *
 * Keys are matched in place (`specialKeyAt`), without slicing each key out of the text; the
 * pieces are joined once, so the value is one flat string, not a tree of concatenations.
 */
export function spliceEnvelope(
  text: string,
  members: ObjectMembers,
  checked: CheckedCall,
  facts: RequestFacts,
): string {
  const { call, nulls } = checked;
  const fields = envelopeFields(checked, facts, !facts.batchContext && isJsonObject(call.context));
  const at = members.at;
  let used = 0; // bit f: fields[f] was written in place (at most 13 fields)
  const parts: string[] = [];
  for (let m = 0; m < at.length; m += 4) {
    const key = specialKeyAt(text, at[m]!, at[m + 1]!);
    if (key === undefined) {
      parts.push(text.slice(at[m], at[m + 3]));
      continue;
    }
    if (OMITTED_FIELDS.has(key) || nulls?.has(key)) continue;
    let f = 0;
    while (f < fields.length && fields[f]![0] !== key) f++;
    if (f === fields.length) {
      parts.push(text.slice(at[m], at[m + 3]));
      continue;
    }
    used |= 1 << f;
    const value = fields[f]![1];
    parts.push(
      `"${key}":${value === CONTEXT_AS_SENT ? contextAsSent(text, at[m + 2]!, at[m + 3]!, call.context as JsonObject, facts.ip) : fieldText(key, value)}`,
    );
  }
  for (let f = 0; f < fields.length; f++) {
    if (used & (1 << f)) continue;
    const [key, value] = fields[f]!;
    // CONTEXT_AS_SENT is only used for a call that has a context member (met above).
    parts.push(`"${key}":${fieldText(key, value)}`);
  }
  // The braces go into the first and last pieces so that `join` makes the one flat string:
  // `{${joined}}` would be a concatenation that the byte count and the packing flatten again.
  if (parts.length === 0) return '{}';
  parts[0] = `{${parts[0]}`;
  parts[parts.length - 1] += '}';
  return parts.join(',');
}

/**
 * Fields whose value ingest writes itself in a form with nothing to escape: the call type (one
 * of six names) and the timestamps (`YYYY-MM-DDTHH:MM:SS.sssZ`, as `formatTimestamp` writes and
 * `parseCanonicalTimestamp` accepts).
 */
const PLAIN_FIELDS: ReadonlySet<string> = new Set(['type', 'timestamp', 'receivedAt', 'sentAt', 'originalTimestamp']);

const fieldText = (key: string, value: unknown): string =>
  PLAIN_FIELDS.has(key) ? `"${value as string}"` : jsonText(value);

/** The context object's text as sent, with `ip` added as its last key when it has none. */
function contextAsSent(text: string, start: number, end: number, context: JsonObject, ip: string | undefined): string {
  if (ip === undefined || context.ip !== undefined) return text.slice(start, end);
  // `end - 1` is the object's closing brace.
  return `${text.slice(start, end - 1)}${keyCount(context) === 0 ? '' : ','}"ip":${jsonText(ip)}}`;
}
