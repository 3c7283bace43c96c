import { isJsonObject } from '@sluice/envelope';
import { memberKey, type ObjectMembers } from './json-members.ts';

/** The body field that authenticates a request: never stored, not even for a rejected call. */
const WRITE_KEY = 'writeKey';

/**
 * The value of a rejected call's record on `sluice.rejected`: the call's text as sent when ingest
 * knows where it sits in the body, else the parsed call serialised, in both cases without its
 * `writeKey` member. A call that cannot be serialised (nested too deep for `JSON.stringify`) is
 * stored without a value, and `note` says why.
 */
export function rejectedCallValue(
  call: unknown,
  text: string | undefined,
  members: ObjectMembers | undefined,
): { text: string | null; note?: string } {
  if (text !== undefined && members) return { text: withoutWriteKey(text, members) };
  const value = isJsonObject(call) && Object.hasOwn(call, WRITE_KEY) ? { ...call, [WRITE_KEY]: undefined } : call;
  try {
    return { text: JSON.stringify(value ?? null) };
  } catch {
    return { text: null, note: 'the call is not stored: it is nested too deep to serialise' };
  }
}

/** The object's text as sent, its `writeKey` members left out. */
function withoutWriteKey(text: string, members: ObjectMembers): string {
  const at = members.at;
  let found = false;
  for (let m = 0; m < at.length && !found; m += 4) found = memberKey(text, members, m) === WRITE_KEY;
  if (!found) return text.slice(members.start, members.end);
  const kept: string[] = [];
  for (let m = 0; m < at.length; m += 4) {
    if (memberKey(text, members, m) !== WRITE_KEY) kept.push(text.slice(at[m], at[m + 3]));
  }
  return `{${kept.join(',')}}`;
}
